// What watch announces during an operator's maintenance window (core/maintenance_window.h): an
// alert that fires while the window holds is held back, and so is its resolution; one still
// firing when the window ends is announced then. The rules go on judging throughout, so a fault
// that outlasts the work is caught as soon as the window closes, with its true start time.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/maintenance_window.h"
#include "watch/alert_engine.h"

namespace trainrig::watch {

class MaintenanceGate {
public:
    // `changed`: the alerts a tick fired or resolved; `firing`: every alert firing after it;
    // `window`: the maintenance window in force now, if any. Returns what is to be announced.
    std::vector<Alert> pass(const std::vector<Alert>& changed, const std::vector<Alert>& firing,
                            const std::optional<MaintenanceWindow>& window);
    bool holding() const { return holding_; }
    size_t held() const { return held_.size(); }

private:
    bool holding_ = false;
    std::set<std::string> held_;  // the alerts fired in the window and not announced
};

}  // namespace trainrig::watch

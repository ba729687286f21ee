#include "watch/maintenance_gate.h"

#include <fmt/format.h>

namespace trainrig::watch {

namespace {

// One alert, as the engine keys it: its rule and where (GPU, Xid, PCI device).
std::string key(const Alert& a) {
    return fmt::format("{}/{}/{}/{}", a.rule, a.gpu, a.xid, a.device);
}

}  // namespace

std::vector<Alert> MaintenanceGate::pass(const std::vector<Alert>& changed,
                                         const std::vector<Alert>& firing,
                                         const std::optional<MaintenanceWindow>& window) {
    std::vector<Alert> out;
    if (window) {
        holding_ = true;
        for (const auto& a : changed) {
            if (a.firing)
                held_.insert(key(a));
            else if (held_.erase(key(a)) == 0)
                out.push_back(a);  // an alert from before the window ended: said as always
        }
        return out;
    }
    holding_ = false;
    // The window is over: what fired in it and still fires is announced now.
    for (const auto& a : firing)
        if (held_.count(key(a))) out.push_back(a);
    for (const auto& a : changed)
        if (a.firing || held_.count(key(a)) == 0) out.push_back(a);
    held_.clear();
    return out;
}

}  // namespace trainrig::watch

#include "core/reload_signal.h"

namespace trainrig {

ReloadSignal::ReloadSignal() {
    struct sigaction sa {};
    sa.sa_handler = [](int) { requested().store(true); };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, &old_);
}

ReloadSignal::~ReloadSignal() { sigaction(SIGHUP, &old_, nullptr); }

std::atomic<bool>& ReloadSignal::requested() {
    static std::atomic<bool> flag{false};
    return flag;
}

}  // namespace trainrig

// SIGHUP as a request to reload configuration (watch's rules), taken by the loop at its next
// tick; the previous handler comes back when it goes out of scope.
#pragma once

#include <signal.h>

#include <atomic>

namespace trainrig {

class ReloadSignal {
public:
    ReloadSignal();
    ~ReloadSignal();
    ReloadSignal(const ReloadSignal&) = delete;
    ReloadSignal& operator=(const ReloadSignal&) = delete;
    // Whether SIGHUP came since the last call.
    bool take() { return requested().exchange(false); }

private:
    static std::atomic<bool>& requested();
    struct sigaction old_ {};
};

}  // namespace trainrig

// SIGINT/SIGTERM as a request to stop: while a CancelSignals is alive the two signals set a flag
// that long-running work polls, so it can remove what it created and return; the previous
// handlers come back when it goes out of scope.
#pragma once

#include <signal.h>

#include <atomic>

namespace trainrig {

class CancelSignals {
public:
    CancelSignals();
    ~CancelSignals();
    CancelSignals(const CancelSignals&) = delete;
    CancelSignals& operator=(const CancelSignals&) = delete;

    static const std::atomic<bool>& flag();
    // The same request as a plain int, for code across a C boundary (the GPU benchmark plugin).
    static const volatile int* flag_int();
    // The signal that asked to stop (SIGINT, SIGTERM), or 0. Once the work has cleaned up, the
    // process exits 128 + it, as the shell reports a process the signal killed (docs/cli.md).
    static int received();

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

}  // namespace trainrig

// A command run under supervision, for work that may run long, hang or crash (validate's
// measuring stages): its own process group, asked to stop (SIGTERM) when its time is up or when
// this process is asked to stop (Ctrl-C, SIGTERM), and killed (SIGKILL) if it has not ended a
// grace period later. trainrig never waits for it beyond that: a child stuck in an
// uninterruptible driver call cannot be reaped until the call returns, and is left to init.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/child_process.h"
#include "core/status.h"

namespace trainrig {

struct SupervisedLimits {
    std::chrono::milliseconds stop_after{0};  // 0: no time limit (Ctrl-C still stops it)
    std::chrono::milliseconds grace{10000};   // after asking it to stop
    size_t max_output = 64 << 20;             // per stream; beyond it is dropped
};

struct SupervisedRun {
    CommandOutput output;      // exit_code -1 and signal set when a signal ended it
    bool timed_out = false;    // asked to stop because stop_after passed
    bool interrupted = false;  // asked to stop because this process was
    bool killed = false;       // did not end within the grace: SIGKILL
    bool left_behind = false;  // killed, and still not reaped a second later
};

// kNotFound when argv[0] cannot be run; anything the child does is in the SupervisedRun.
Result<SupervisedRun> run_supervised(const std::vector<std::string>& argv,
                                     const SupervisedLimits& limits);

}  // namespace trainrig

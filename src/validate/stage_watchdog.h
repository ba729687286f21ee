// A bound on a validate stage that hangs (docs/report.md, "A stage that does not finish"). The
// stage's work runs in a thread of its own; past its time limit it is asked to stop (the same flag
// Ctrl-C sets), and a stage that has not returned a grace period after being asked — a call stuck
// in the driver or on a dead mount — is abandoned: the thread is left behind, the caller never
// touches what it holds again, and the run goes on to write its report.
#pragma once

#include <functional>
#include <memory>

namespace trainrig::validate {

enum class StageEnd {
    kFinished,   // returned within its limit (or after Ctrl-C, which the caller sees)
    kTimedOut,   // ran past its limit, asked to stop, and returned
    kAbandoned,  // did not return after being asked to stop: its thread is left behind
};

struct WatchLimits {
    double timeout_seconds = 0;  // <= 0: no limit
    double grace_seconds = 10;   // after asking it to stop
};

// `work` must keep everything it touches alive by itself (shared_ptr captures): when the stage
// is abandoned its thread outlives this call.
StageEnd run_watched(std::function<void()> work, const WatchLimits& limits);

// The limit validate gives a stage: three times its budget and a minute, or `override_seconds`
// (--stage-timeout) when positive; the grace is a quarter of it, between 1 and 30 s.
WatchLimits stage_limits(double budget_seconds, double override_seconds);

}  // namespace trainrig::validate

#include "validate/stage_watchdog.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "core/cancel_signals.h"

namespace trainrig::validate {

namespace {

using Clock = std::chrono::steady_clock;

struct Done {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
};

std::chrono::steady_clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

StageEnd run_watched(std::function<void()> work, const WatchLimits& limits) {
    auto done = std::make_shared<Done>();
    std::thread worker([done, work = std::move(work)] {
        work();
        std::lock_guard<std::mutex> lock(done->m);
        done->done = true;
        done->cv.notify_all();
    });
    const auto start = Clock::now();
    bool timed_out = false;
    std::optional<Clock::time_point> asked;  // when the work was asked to stop
    std::unique_lock<std::mutex> lock(done->m);
    while (!done->done) {
        done->cv.wait_for(lock, std::chrono::milliseconds(100));
        if (done->done) break;
        const auto now = Clock::now();
        if (limits.timeout_seconds > 0 && now - start > seconds(limits.timeout_seconds))
            timed_out = true;
        // Re-asserted every tick: work that installs its own signal handlers clears the flag.
        if (timed_out) CancelSignals::request_stop();
        if ((timed_out || CancelSignals::received() != 0) && !asked) asked = now;
        if (asked && now - *asked > seconds(limits.grace_seconds)) {
            lock.unlock();
            worker.detach();
            if (timed_out) CancelSignals::clear_request();
            return StageEnd::kAbandoned;
        }
    }
    lock.unlock();
    worker.join();
    if (timed_out) CancelSignals::clear_request();
    return timed_out ? StageEnd::kTimedOut : StageEnd::kFinished;
}

WatchLimits stage_limits(double budget_seconds, double override_seconds) {
    WatchLimits l;
    l.timeout_seconds = override_seconds > 0 ? override_seconds : 3 * budget_seconds + 60;
    l.grace_seconds = std::clamp(l.timeout_seconds / 4, 1.0, 30.0);
    return l;
}

}  // namespace trainrig::validate

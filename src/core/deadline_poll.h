// Waiting with a deadline on something that finishes on its own (work queued on a GPU, an NCCL
// communicator's set-up): poll, spin briefly, then sleep between polls, and give up at the
// deadline. What failed or overran is aborted exactly once, so nothing is left running against
// memory the caller is about to free, and no caller waits for ever on a peer that never comes.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"

namespace trainrig {

// What one poll saw: nothing yet (std::nullopt), done (an ok Status), or the failure.
using PollOutcome = std::optional<Status>;

// Several things polled as one: the first failure, else pending while any is, else done.
inline PollOutcome combine_polls(const std::vector<PollOutcome>& each) {
    bool pending = false;
    for (const PollOutcome& o : each) {
        if (!o)
            pending = true;
        else if (!o->ok())
            return o;
    }
    return pending ? PollOutcome{} : PollOutcome{Status{}};
}

struct PollLimit {
    std::chrono::steady_clock::duration limit;  // from the first poll
    std::string_view what;       // "the NCCL communicator's set-up": the timeout names it
    std::string_view next_step;  // the timeout's next step
    // Polls this long without sleeping first: a wake-up from even a short sleep costs about
    // 100 µs, a percent of a training step that waits for the GPU several times.
    std::chrono::microseconds spin{1000};
    std::chrono::microseconds interval{50};  // between polls after that
};

// The real clock. Tests pass their own with the same two members, advanced by sleep().
struct SteadyPollClock {
    std::chrono::steady_clock::time_point now() const { return std::chrono::steady_clock::now(); }
    void sleep(std::chrono::microseconds d) const {
        if (d.count() == 0)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(d);
    }
};

// Calls poll() until it answers done or failed, or `limit.limit` has passed; abort() runs
// exactly once on a failure or a timeout, never on success. The timeout is kIo, "<what> did
// not finish within N s".
template <class Poll, class Abort, class Clock = SteadyPollClock>
Status poll_until(Poll&& poll, Abort&& abort, const PollLimit& limit, const Clock& clock = {}) {
    const auto start = clock.now();
    for (;;) {
        PollOutcome seen = poll();
        if (seen) {
            if (!seen->ok()) abort();
            return std::move(*seen);
        }
        const auto waited = clock.now() - start;
        if (waited > limit.limit) {
            abort();
            return Status{Errc::kIo,
                          fmt::format("{} did not finish within {:g} s", limit.what,
                                      std::chrono::duration<double>(limit.limit).count()),
                          std::string(limit.next_step)};
        }
        clock.sleep(waited < limit.spin ? std::chrono::microseconds(0) : limit.interval);
    }
}

}  // namespace trainrig

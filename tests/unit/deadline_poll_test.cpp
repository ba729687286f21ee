// The bounded wait under every NCCL set-up and GPU wait (core/deadline_poll.h), on a clock that
// only moves when the loop sleeps: done after k polls, a failure, a timeout, and abort() exactly
// once on the last two, never on the first.
#include "core/deadline_poll.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace trainrig {
namespace {

using std::chrono::microseconds;
using namespace std::chrono_literals;

// Time passes only in sleep(); a zero sleep (a yield while spinning) costs 10 µs.
struct FakeClock {
    mutable std::chrono::steady_clock::time_point t{};
    mutable std::vector<microseconds> sleeps;
    std::chrono::steady_clock::time_point now() const { return t; }
    void sleep(microseconds d) const {
        sleeps.push_back(d);
        t += d.count() == 0 ? microseconds(10) : d;
    }
};

struct Counts {
    int polls = 0;
    int aborts = 0;
};

PollLimit limit(std::chrono::steady_clock::duration d) {
    return PollLimit{d, "the NCCL communicator's set-up", "look at the other ranks"};
}

TEST(DeadlinePoll, DoneAfterKPollsNeverAborts) {
    for (const int k : {1, 2, 50, 500}) {
        Counts c;
        FakeClock clock;
        const Status s =
            poll_until([&]() -> PollOutcome { return ++c.polls < k ? PollOutcome{} : Status{}; },
                       [&] { ++c.aborts; }, limit(120s), clock);
        EXPECT_TRUE(s.ok()) << k;
        EXPECT_EQ(c.polls, k);
        EXPECT_EQ(c.aborts, 0);
        EXPECT_EQ(clock.sleeps.size(), static_cast<size_t>(k - 1)) << "one sleep between polls";
    }
}

TEST(DeadlinePoll, FailureAbortsOnceAndIsReturned) {
    Counts c;
    FakeClock clock;
    const Status s = poll_until(
        [&]() -> PollOutcome {
            return ++c.polls < 3 ? PollOutcome{} : Status{Errc::kIo, "ncclRemoteError"};
        },
        [&] { ++c.aborts; }, limit(120s), clock);
    EXPECT_EQ(s.message(), "ncclRemoteError");
    EXPECT_EQ(c.polls, 3);
    EXPECT_EQ(c.aborts, 1);
}

TEST(DeadlinePoll, TimeoutAbortsOnceAtTheDeadline) {
    Counts c;
    FakeClock clock;
    const Status s = poll_until(
        [&]() -> PollOutcome {
            ++c.polls;
            return PollOutcome{};
        },
        [&] { ++c.aborts; }, limit(2s), clock);
    EXPECT_EQ(s.code(), Errc::kIo);
    EXPECT_EQ(s.message(), "the NCCL communicator's set-up did not finish within 2 s");
    EXPECT_EQ(s.next_step(), "look at the other ranks");
    EXPECT_EQ(c.aborts, 1);
    // Given up on the first poll past the deadline, not long after.
    const auto waited = clock.t - std::chrono::steady_clock::time_point{};
    EXPECT_GT(waited, 2s);
    EXPECT_LT(waited, 2s + 100us);
    // 100 spinning polls in the first millisecond, then one per 50 µs.
    EXPECT_EQ(c.polls, 100 + (2'000'000 - 1'000) / 50 + 2);
}

TEST(DeadlinePoll, SpinsFirstThenSleepsTheInterval) {
    FakeClock clock;
    int polls = 0;
    (void)poll_until([&]() -> PollOutcome { return ++polls < 200 ? PollOutcome{} : Status{}; },
                     [] {}, limit(120s), clock);
    ASSERT_EQ(clock.sleeps.size(), 199u);
    for (size_t i = 0; i < clock.sleeps.size(); ++i)
        EXPECT_EQ(clock.sleeps[i], i < 100 ? 0us : 50us) << i;
}

TEST(DeadlinePoll, CombinedPollsFailFirstThenWait) {
    const Status bad{Errc::kIo, "rank 1 failed"};
    EXPECT_EQ(combine_polls({Status{}, PollOutcome{}, bad})->message(), "rank 1 failed");
    EXPECT_FALSE(combine_polls({Status{}, PollOutcome{}, Status{}}).has_value());
    EXPECT_TRUE(combine_polls({Status{}, Status{}})->ok());
    EXPECT_TRUE(combine_polls({})->ok());
}

}  // namespace
}  // namespace trainrig

// validate's stage watchdog: a stage within its limit finishes; one past it is asked to stop
// (the cancel flag) and, if it returns, timed out; one that ignores the request is left behind
// after the grace period. The flag is taken back afterwards, so the next stage runs.
#include "validate/stage_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/cancel_signals.h"

namespace trainrig::validate {
namespace {

using namespace std::chrono_literals;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(StageLimits, ThreeBudgetsAndAMinuteUnlessOverridden) {
    auto l = stage_limits(60, 0);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 240);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 30);  // a quarter would be 60: capped
    l = stage_limits(5, 0);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 75);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 18.75);
    l = stage_limits(900, 2);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 2);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 1);  // a quarter would be 0.5: at least a second
}

TEST(RunWatched, WorkWithinItsLimitFinishes) {
    auto ran = std::make_shared<std::atomic<int>>(0);
    EXPECT_EQ(run_watched([ran] { ran->store(1); }, {5, 1}), StageEnd::kFinished);
    EXPECT_EQ(ran->load(), 1);
    EXPECT_EQ(run_watched([ran] { ran->store(2); }, {0, 1}), StageEnd::kFinished);  // no limit
    EXPECT_EQ(ran->load(), 2);
}

TEST(RunWatched, WorkPastItsLimitIsAskedToStopAndTheRequestTakenBack) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto end = run_watched(
        [] {
            while (!CancelSignals::flag().load()) std::this_thread::sleep_for(10ms);
        },
        {0.3, 5});
    EXPECT_EQ(end, StageEnd::kTimedOut);
    EXPECT_GE(seconds_since(t0), 0.3);
    EXPECT_LT(seconds_since(t0), 3);
    EXPECT_FALSE(CancelSignals::flag().load());
    EXPECT_EQ(*CancelSignals::flag_int(), 0);
    EXPECT_EQ(CancelSignals::received(), 0);
}

TEST(RunWatched, WorkThatIgnoresTheRequestIsLeftBehindAfterTheGrace) {
    auto release = std::make_shared<std::atomic<bool>>(false);
    auto returned = std::make_shared<std::atomic<bool>>(false);
    const auto t0 = std::chrono::steady_clock::now();
    const auto end = run_watched(
        [release, returned] {
            while (!release->load()) std::this_thread::sleep_for(10ms);
            returned->store(true);
        },
        {0.2, 0.3});
    EXPECT_EQ(end, StageEnd::kAbandoned);
    EXPECT_GE(seconds_since(t0), 0.5);
    EXPECT_LT(seconds_since(t0), 3);
    EXPECT_FALSE(returned->load());
    EXPECT_FALSE(CancelSignals::flag().load());
    release->store(true);  // the left-behind thread owns what it touches and ends on its own
    for (int i = 0; i < 200 && !returned->load(); ++i) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(returned->load());
}

}  // namespace
}  // namespace trainrig::validate

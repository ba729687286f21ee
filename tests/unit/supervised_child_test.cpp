// A supervised child (core/supervised_child.h), with sh as the child: it runs to the end; past
// its limit it is asked to stop (SIGTERM); one that ignores that is killed after the grace; one
// that dies of a signal of its own says which.
#include "core/supervised_child.h"

#include <gtest/gtest.h>

#include <csignal>

namespace trainrig {
namespace {

using namespace std::chrono_literals;

SupervisedRun sh(const std::string& script, std::chrono::milliseconds stop_after,
                 std::chrono::milliseconds grace = 500ms) {
    SupervisedLimits l;
    l.stop_after = stop_after;
    l.grace = grace;
    auto r = run_supervised({"sh", "-c", script}, l);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : SupervisedRun{};
}

TEST(SupervisedChild, RunsToTheEndAndKeepsBothStreams) {
    const auto r = sh("echo out; echo err >&2; exit 3", 5000ms);
    EXPECT_EQ(r.output.exit_code, 3);
    EXPECT_EQ(r.output.out, "out\n");
    EXPECT_EQ(r.output.err, "err\n");
    EXPECT_FALSE(r.timed_out || r.killed || r.interrupted);
}

TEST(SupervisedChild, PastItsLimitItIsAskedToStopAndMaySayWhatItHad) {
    const auto r = sh("trap 'echo partial; exit 143' TERM; while :; do sleep 0.05; done", 200ms);
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.killed);
    EXPECT_EQ(r.output.exit_code, 143);
    EXPECT_EQ(r.output.out, "partial\n");
}

TEST(SupervisedChild, OneThatIgnoresTheRequestIsKilledAfterTheGrace) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = sh("trap '' TERM; while :; do sleep 0.05; done", 200ms, 300ms);
    EXPECT_TRUE(r.timed_out);
    EXPECT_TRUE(r.killed);
    EXPECT_EQ(r.output.signal, SIGKILL);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

TEST(SupervisedChild, ADeathOfItsOwnIsItsSignal) {
    const auto r = sh("kill -SEGV $$", 5000ms);
    EXPECT_EQ(r.output.signal, SIGSEGV);
    EXPECT_FALSE(r.timed_out || r.killed);
}

TEST(SupervisedChild, AMissingProgramIsNotFound) {
    auto r = run_supervised({"/nonexistent/trainrig-no-such-program"}, {});
    EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace trainrig

// Child processes with deadlines: output, exit codes, a missing program, a hang, a crash.
#include "core/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

namespace trainrig {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(RunCommand, CapturesOutputAndExitCode) {
    auto r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5s);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->out, "out\n");
    EXPECT_EQ(r->err, "err\n");
    EXPECT_EQ(r->exit_code, 3);
}

TEST(RunCommand, MissingProgramIsNotFound) {
    auto r = run_command({"trainrig-no-such-program"}, 5s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), Errc::kNotFound);
}

TEST(RunCommand, DeadlineKillsTheWholeGroup) {
    const auto start = Clock::now();
    // The grandchild keeps stdout open: killing only the shell would leave the read waiting.
    auto r = run_command({"sh", "-c", "sleep 30 & sleep 30"}, 300ms);
    const auto took = Clock::now() - start;
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("did not finish within 0.3 s"), std::string::npos)
        << r.status().message();
    EXPECT_LT(took, 3s);
}

TEST(RunIsolated, ReturnsWhatTheChildWrote) {
    auto r =
        run_isolated([](IsolatedChannel& ch) { ch.out() = std::string(200000, 'x'); }, 5s, "test");
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->size(), 200000u);
}

TEST(RunIsolated, HangIsCutAtTheDeadlineAndNamesTheStep) {
    const auto start = Clock::now();
    auto r = run_isolated(
        [](IsolatedChannel& ch) {
            ch.step("nvmlDeviceGetTemperature on GPU 1");
            std::this_thread::sleep_for(60s);
        },
        300ms, "NVML");
    const auto took = Clock::now() - start;
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message(),
              "NVML did not answer within 0.3 s (no return from nvmlDeviceGetTemperature on GPU "
              "1)");
    EXPECT_LT(took, 2s);
    EXPECT_GE(took, 300ms);
}

TEST(RunIsolated, CrashIsReportedWithTheStep) {
    auto r = run_isolated(
        [](IsolatedChannel& ch) {
            ch.step("nvmlInit");
            std::raise(SIGKILL);
        },
        5s, "NVML");
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("NVML crashed"), std::string::npos);
    EXPECT_NE(r.status().message().find("in nvmlInit"), std::string::npos);
}

TEST(RunIsolated, AnExceptionInTheChildStaysInTheChild) {
    auto r = run_isolated([](IsolatedChannel&) { throw std::runtime_error("boom"); }, 5s, "NVML");
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("NVML crashed (exit 4)"), std::string::npos)
        << r.status().message();
}

}  // namespace
}  // namespace trainrig

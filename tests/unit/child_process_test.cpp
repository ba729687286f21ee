// Child processes with deadlines: output, exit codes, a missing program, a hang (and the group
// it is killed with), a crash.
#include "core/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
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

TEST(RunInChild, ATimeoutKillsTheChildsWholeGroup) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    auto r = run_in_child(
        [&](IsolatedChannel& ch) {
            const pid_t grandchild = ::fork();  // something the child started, in its group
            if (grandchild == 0)
                for (;;) ::pause();
            const int pid = static_cast<int>(grandchild);
            (void)!::write(pipe_fds[1], &pid, sizeof pid);
            ch.step("waiting for ever");
            for (;;) ::pause();
        },
        300ms, 0ms);
    ::close(pipe_fds[1]);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_TRUE(r->timed_out);
    EXPECT_FALSE(r->interrupted);
    EXPECT_EQ(r->step, "waiting for ever");
    int grandchild = 0;
    ASSERT_EQ(::read(pipe_fds[0], &grandchild, sizeof grandchild),
              static_cast<ssize_t>(sizeof grandchild));
    ::close(pipe_fds[0]);
    // Killed with the group: gone, or a zombie until init reaps it; never still running.
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
        gone = ::kill(grandchild, 0) != 0;
        if (!gone) {
            char state = '?';
            if (FILE* f =
                    std::fopen(("/proc/" + std::to_string(grandchild) + "/stat").c_str(), "r")) {
                (void)!std::fscanf(f, "%*d (%*[^)]) %c", &state);
                std::fclose(f);
            }
            gone = state == 'Z';
        }
        if (!gone) std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(gone);
}

TEST(RunInChild, WithoutADeadlineASlowChildFinishesAndSaysHowItEnded) {
    auto r = run_in_child(
        [](IsolatedChannel& ch) {
            std::this_thread::sleep_for(400ms);
            const char bytes[3] = {'a', '\0', 'b'};
            ch.send(bytes, sizeof bytes);  // at once, then out() after it
            ch.out() = "c";
        },
        0ms, 0ms);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_FALSE(r->timed_out);
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_EQ(r->signal, 0);
    EXPECT_EQ(r->out, std::string("a\0bc", 4));
    // A child that announces progress is not cut while it keeps doing so.
    r = run_in_child(
        [](IsolatedChannel& ch) {
            for (int i = 0; i < 6; ++i) {
                ch.step("step " + std::to_string(i));
                std::this_thread::sleep_for(100ms);
            }
        },
        300ms, 0ms);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->timed_out);
    EXPECT_EQ(r->step, "step 5");
    r = run_in_child([](IsolatedChannel&) { std::raise(SIGUSR1); }, 5s, 0ms);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->signal, SIGUSR1);
}

}  // namespace
}  // namespace trainrig

// Ctrl-C while doctor waits for a child (the PyTorch probe): the child is stopped with it, and
// doctor exits 130 after saying so in one sentence.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hanging_python.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

TEST(Interrupt, CtrlCDuringThePytorchProbeStopsTheProbeToo) {
    const fs::path dir = fs::temp_directory_path() / ("interrupt-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    HangingPythonRun run(dir, {TRAINRIG_BINARY, "doctor", "--timeout", "30"});
    ASSERT_TRUE(run.process().started());
    ASSERT_TRUE(run.probe_started()) << "the probe never started: " << run.err();
    const pid_t probe = run.probe_pid();
    EXPECT_EQ(run.process().stop(SIGINT, 5), 128 + SIGINT) << run.err();
    EXPECT_NE(run.err().find("interrupted"), std::string::npos) << run.err();
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = ::kill(probe, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone) << "the probe (pid " << probe << ") outlived doctor";
    if (!gone) ::kill(probe, SIGKILL);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace trainrig::test

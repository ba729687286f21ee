// Ctrl-C while doctor waits for a child (the PyTorch probe): the child is stopped with it, and
// doctor exits 130 after saying so in one sentence.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "background_process.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

TEST(Interrupt, CtrlCDuringThePytorchProbeStopsTheProbeToo) {
    const fs::path dir = fs::temp_directory_path() / ("interrupt-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A python3 that never answers, and says which process it is.
    {
        std::ofstream py(dir / "python3");
        py << "#!/bin/sh\necho $$ > " << (dir / "pid").string() << "\nexec sleep 60\n";
    }
    fs::permissions(dir / "python3", fs::perms::owner_all);
    // The child inherits this process's PATH, with the fake first.
    const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("PATH", (dir.string() + ":" + path).c_str(), 1);
    BackgroundProcess doctor({TRAINRIG_BINARY, "doctor", "--timeout", "30"}, {},
                             (dir / "out").string(), (dir / "err").string());
    ::setenv("PATH", path.c_str(), 1);
    ASSERT_TRUE(doctor.started());
    for (int i = 0; i < 200 && !fs::exists(dir / "pid"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(fs::exists(dir / "pid")) << "the probe never started: " << slurp(dir / "err");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const pid_t probe = std::stoi(slurp(dir / "pid"));
    EXPECT_EQ(doctor.stop(SIGINT, 5), 128 + SIGINT) << slurp(dir / "err");
    EXPECT_NE(slurp(dir / "err").find("interrupted"), std::string::npos) << slurp(dir / "err");
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

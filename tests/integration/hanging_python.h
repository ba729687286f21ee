// A python3 that never answers and writes its pid to DIR/pid, first on PATH for one command:
// doctor's PyTorch probe hangs on it, so a test can interrupt a command at that moment.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "background_process.h"
#include "run_binary.h"

namespace trainrig::test {

class HangingPythonRun {
public:
    HangingPythonRun(const std::filesystem::path& dir, const std::vector<std::string>& argv)
        : dir_(dir) {
        std::ofstream(dir / "python3")
            << "#!/bin/sh\necho $$ > " << (dir / "pid").string() << "\nexec sleep 60\n";
        std::filesystem::permissions(dir / "python3", std::filesystem::perms::owner_all);
        // The child inherits this process's PATH, with the fake first.
        const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
        ::setenv("PATH", (dir.string() + ":" + path).c_str(), 1);
        process_.emplace(argv, std::vector<std::string>{}, (dir / "out").string(),
                         (dir / "err").string());
        ::setenv("PATH", path.c_str(), 1);
    }
    BackgroundProcess& process() { return *process_; }
    // Waits up to 10 s for the probe to start; then a little more, so it is waited on.
    bool probe_started() {
        for (int i = 0; i < 200 && !std::filesystem::exists(dir_ / "pid"); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return std::filesystem::exists(dir_ / "pid");
    }
    pid_t probe_pid() const { return std::stoi(slurp(dir_ / "pid")); }
    std::string err() const { return slurp(dir_ / "err"); }

private:
    std::filesystem::path dir_;
    std::optional<BackgroundProcess> process_;
};

}  // namespace trainrig::test

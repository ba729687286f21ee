// Runs the trainrig binary as a user would and captures exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trainrig::test {

struct RunResult {
    int rc = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string fixture(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/machines/" + name;
}

// Runs a shell command line and captures its exit code, stdout and stderr.
inline RunResult run_sh(const std::string& command) {
    static int counter = 0;
    auto base = std::filesystem::temp_directory_path() /
                ("trainrig-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    const std::string cmd =
        command + " >" + base.string() + ".out 2>" + base.string() + ".err </dev/null";
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(base.string() + ".out");
    r.err = slurp(base.string() + ".err");
    std::filesystem::remove(base.string() + ".out");
    std::filesystem::remove(base.string() + ".err");
    return r;
}

// `args` is appended to the binary path as-is (shell words); env is prefixed (VAR=x ...).
inline RunResult run_trainrig(const std::string& args, const std::string& env = "") {
    return run_sh(env + " " + TRAINRIG_BINARY + " " + args);
}

}  // namespace trainrig::test

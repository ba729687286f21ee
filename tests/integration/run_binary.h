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
#include <vector>

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

// `mpirun --oversubscribe -np N` as the tests start it, an environment and a command to follow:
// as root (CI runs as root; Open MPI refuses it unless told), over shared memory, LeakSanitizer
// off (Open MPI's own allocations outlive MPI_Finalize), each rank given ASAN_OPTIONS and the
// variables named in `exported`.
inline std::string mpirun_prefix(int ranks, const std::vector<std::string>& exported = {}) {
    std::string s =
        " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
        "ASAN_OPTIONS=detect_leaks=0 mpirun --oversubscribe -np " +
        std::to_string(ranks) + " -x ASAN_OPTIONS";
    for (const auto& v : exported) s += " -x " + v;
    return s + " ";
}

}  // namespace trainrig::test

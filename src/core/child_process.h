// Running work in a child process with a deadline: a command (nvcc, python3) through
// run_command(), or a function of ours through run_isolated(). Both return once the deadline
// passes, whatever the child does: a driver call stuck in the kernel must not hang trainrig.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainrig {

struct CommandOutput {
    int exit_code = -1;  // -1 when killed by a signal
    int signal = 0;
    std::string out;
    std::string err;
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null. kNotFound when the program is not
// there; kIo with "did not finish within N s" when the deadline passed (the child's process
// group is killed). Output beyond `max_output` bytes per stream is dropped.
Result<CommandOutput> run_command(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds deadline, size_t max_output = 1 << 20);

// Starts argv[0] (looked up in PATH) in a process group of its own, stdin from /dev/null,
// stdout and stderr on the given descriptors. kNotFound when the program is not there.
Result<pid_t> spawn_in_own_group(const std::vector<std::string>& argv, int out_fd, int err_fd);

// What the isolated function sees: a place to write its answer, and a way to say what it is
// doing now so that a timeout can name the call that hung.
class IsolatedChannel {
public:
    explicit IsolatedChannel(void* shared) : shared_(shared) {}
    void step(std::string_view what);
    std::string& out() { return out_; }

private:
    void* shared_;  // a page the parent reads (child_process.cpp)
    std::string out_;
};

// Runs fn in a forked child and returns what it put in out(). The deadline applies to each step
// the child announces (and to the time before the first): a step that does not end within it is
// kIo "<what> did not answer within N s (no return from <step>)". A crash is kInternal naming
// the signal and the step.
Result<std::string> run_isolated(const std::function<void(IsolatedChannel&)>& fn,
                                 std::chrono::milliseconds deadline, std::string_view what);

// "5 s", "0.5 s": a deadline as people read it.
std::string format_seconds(std::chrono::milliseconds d);

}  // namespace trainrig

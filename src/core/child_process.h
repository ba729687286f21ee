// Running work in a child process with a deadline: a command (nvcc, python3) through
// run_command(), or a function of ours through run_isolated() and run_in_child(). All return once
// the deadline passes, whatever the child does: a driver call stuck in the kernel must not hang
// trainrig.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
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
    IsolatedChannel(void* shared, int fd) : shared_(shared), fd_(fd) {}
    void step(std::string_view what);
    std::string& out() { return out_; }
    // Writes to the parent at once, allocating nothing: for a child that must answer from where
    // it cannot return (a new-handler) and then _exit()s.
    void send(const void* data, size_t size);

private:
    void* shared_;  // a page the parent reads (child_process.cpp)
    int fd_;        // the pipe to the parent
    std::string out_;
};

// How a child of run_in_child() ended.
struct IsolatedEnd {
    std::string out;           // what it sent, then what it left in out()
    bool timed_out = false;    // a step ran past the deadline: its process group was killed
    bool interrupted = false;  // this process was asked to stop: the child's group was killed
    int exit_code = -1;        // when it exited by itself
    int signal = 0;            // when a signal ended it (not ours)
    std::string step;          // the last step it announced ("" before the first)
};

// Runs fn in a forked child and waits for it. The child is the leader of a process group of
// its own (a timeout kills everything it started) and dies with this process (PR_SET_PDEATHSIG).
// `deadline` applies to each step the child announces (and to the time before the first), so a
// child that keeps making progress is not cut; `cap` bounds the whole run. Zero: no limit.
// Fails only when the child cannot be started.
Result<IsolatedEnd> run_in_child(const std::function<void(IsolatedChannel&)>& fn,
                                 std::chrono::milliseconds deadline, std::chrono::milliseconds cap);

// Runs fn in a forked child and returns what it put in out(). The deadline applies to each step
// the child announces (and to the time before the first), with a cap of 20 deadlines in all: a
// step that does not end within it is kIo "<what> did not answer within N s (no return from
// <step>)". A crash is kInternal naming the signal and the step.
Result<std::string> run_isolated(const std::function<void(IsolatedChannel&)>& fn,
                                 std::chrono::milliseconds deadline, std::string_view what);

// "5 s", "0.5 s": a deadline as people read it.
std::string format_seconds(std::chrono::milliseconds d);

}  // namespace trainrig

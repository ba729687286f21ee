// Child processes with deadlines. The parent never blocks on the child beyond the deadline: it
// polls the pipes, kills on expiry, and reaps without waiting (a child stuck in an
// uninterruptible driver call cannot be reaped until the call returns; init inherits it).
#include "core/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/cancel_signals.h"
#include "core/pipe_pair.h"
#include "core/text.h"

extern char** environ;

namespace trainrig {

namespace {

using Clock = std::chrono::steady_clock;

using Pipe = PipePair;

// Reads every fd until EOF on all of them or the deadline; false on timeout. `extend`, when
// given, is asked every 50 ms and may move the deadline (a child that shows progress).
// A SIGINT/SIGTERM (CancelSignals) ends the wait as a deadline would: the child is killed, not
// left running after trainrig exits.
bool drain(std::vector<std::pair<int, std::string*>> fds, Clock::time_point deadline,
           size_t max_output, const std::function<Clock::time_point()>& extend = {}) {
    while (!fds.empty()) {
        if (CancelSignals::flag().load()) return false;
        if (extend) deadline = std::max(deadline, extend());
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        left = std::min(left, std::chrono::milliseconds(50));
        std::vector<pollfd> pfds;
        for (auto& [fd, _] : fds) pfds.push_back({fd, POLLIN, 0});
        int n = poll(pfds.data(), pfds.size(), static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        for (size_t i = pfds.size(); i-- > 0;) {
            if (!pfds[i].revents) continue;
            char buf[65536];
            ssize_t got = read(pfds[i].fd, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got <= 0) {
                fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            auto* sink = fds[i].second;
            size_t room = max_output > sink->size() ? max_output - sink->size() : 0;
            sink->append(buf, std::min(room, static_cast<size_t>(got)));
        }
    }
    return true;
}

// waitpid with a deadline; false when the child is still there at the deadline. A child that
// cannot be waited for (SIGCHLD ignored by whoever started us) reads as killed, never as a
// clean exit.
bool reap(pid_t pid, int& status, Clock::time_point deadline) {
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return true;
        if (r < 0 && errno != EINTR) {
            status = SIGKILL;  // WIFSIGNALED
            return true;
        }
        if (Clock::now() >= deadline || CancelSignals::flag().load()) return false;
        usleep(1000);
    }
}

}  // namespace

std::string format_seconds(std::chrono::milliseconds d) {
    if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
    return fmt::format("{:g} s", static_cast<double>(d.count()) / 1000.0);
}

Result<pid_t> spawn_in_own_group(const std::vector<std::string>& argv, int out_fd, int err_fd) {
    if (argv.empty()) return Status{Errc::kInternal, "spawn: empty argv"};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: kill it whole
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc == ENOENT) return Status{Errc::kNotFound, argv[0] + " is not installed"};
    if (rc != 0) return errno_status(rc, "run", argv[0]);
    return pid;
}

Result<CommandOutput> run_command(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds deadline, size_t max_output) {
    if (argv.empty()) return Status{Errc::kInternal, "run_command: empty argv"};
    const auto until = Clock::now() + deadline;
    Pipe out, err;
    if (!out.open() || !err.open()) return errno_status(errno, "create", "a pipe");
    auto spawned = spawn_in_own_group(argv, out.w, err.w);
    if (!spawned.ok()) return spawned.status();
    const pid_t pid = *spawned;
    close(out.w);
    close(err.w);
    out.w = err.w = -1;
    CommandOutput result;
    bool done = drain({{out.r, &result.out}, {err.r, &result.err}}, until, max_output);
    int status = 0;
    if (!done || !reap(pid, status, until)) {
        kill(-pid, SIGKILL);
        reap(pid, status, Clock::now() + std::chrono::milliseconds(100));
        if (CancelSignals::flag().load())
            return Status{Errc::kIo, fmt::format("`{}` was stopped: interrupted",
                                                 preview(join(argv, " "), 60))};
        return Status{Errc::kIo,
                      fmt::format("`{}` did not finish within {}", preview(join(argv, " "), 60),
                                  format_seconds(deadline))};
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

// The page shared with the child: how many steps it began, and the name of the last one.
struct SharedStep {
    std::atomic<uint64_t> count{0};
    char name[248];
};

void IsolatedChannel::step(std::string_view what) {
    // The parent reads the name after the child stopped or timed out; a torn read at worst shows
    // a mix of two step names, so no lock.
    auto* shared = static_cast<SharedStep*>(shared_);
    size_t n = std::min(what.size(), sizeof shared->name - 1);
    std::memcpy(shared->name, what.data(), n);
    shared->name[n] = '\0';
    shared->count.fetch_add(1, std::memory_order_release);
}

void IsolatedChannel::send(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd_, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        size -= static_cast<size_t>(n);
    }
}

Result<IsolatedEnd> run_in_child(const std::function<void(IsolatedChannel&)>& fn,
                                 std::chrono::milliseconds deadline,
                                 std::chrono::milliseconds cap) {
    constexpr size_t kStepSize = sizeof(SharedStep);
    void* shared =
        mmap(nullptr, kStepSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return errno_status(errno, "map", "shared memory");
    auto* progress = new (shared) SharedStep();
    struct Unmap {
        void* p;
        ~Unmap() { munmap(p, kStepSize); }
    } unmap{shared};

    // The deadline is per step: each call the child begins gets the full time again, so many
    // GPUs answering slowly but surely do not add up to a timeout.
    const auto start = Clock::now();
    const auto until_cap = cap.count() > 0 ? start + cap : Clock::time_point::max();
    uint64_t seen = 0;
    auto last_progress = start;
    auto extend = [&] {
        uint64_t now_count = progress->count.load(std::memory_order_acquire);
        if (now_count != seen) {
            seen = now_count;
            last_progress = Clock::now();
        }
        return deadline.count() > 0 ? std::min(until_cap, last_progress + deadline) : until_cap;
    };
    Pipe pipe;
    if (!pipe.open()) return errno_status(errno, "create", "a pipe");
    const pid_t parent = getpid();
    std::fflush(nullptr);  // nothing buffered is written twice
    pid_t pid = fork();
    if (pid < 0) return errno_status(errno, "fork", "a child process");
    if (pid == 0) {
        // A group of its own, so a timeout kills whatever it started; and no orphan on the GPU
        // when this process is killed outright (by a supervisor's SIGKILL).
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(5);
        close(pipe.r);
        IsolatedChannel channel(shared, pipe.w);
        // An exception must not unwind into the parent's code running in this copy.
        try {
            fn(channel);
        } catch (...) {
            _exit(4);
        }
        channel.send(channel.out().data(), channel.out().size());
        _exit(0);  // no atexit handlers, no flushing of the parent's stdio buffers
    }
    setpgid(pid, pid);  // as the child does: the kill below must find the group either way
    close(pipe.w);
    pipe.w = -1;
    IsolatedEnd end;
    bool done = drain({{pipe.r, &end.out}}, extend(), SIZE_MAX, extend);
    int status = 0;
    if (!done || !reap(pid, status, extend())) {
        if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
        reap(pid, status, Clock::now() + std::chrono::milliseconds(100));
        end.interrupted = CancelSignals::flag().load();
        end.timed_out = !end.interrupted;
    } else if (WIFEXITED(status)) {
        end.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        end.signal = WTERMSIG(status);
    }
    end.step = progress->name;
    return end;
}

Result<std::string> run_isolated(const std::function<void(IsolatedChannel&)>& fn,
                                 std::chrono::milliseconds deadline, std::string_view what) {
    // A cap of 20 deadlines bounds a child that keeps making progress forever.
    auto run = run_in_child(fn, deadline, deadline * 20);
    if (!run.ok()) return run.status();
    const IsolatedEnd& end = *run;
    if (end.interrupted) return Status{Errc::kIo, fmt::format("{} was stopped: interrupted", what)};
    if (end.timed_out)
        return Status{Errc::kIo,
                      fmt::format("{} did not answer within {}{}", what, format_seconds(deadline),
                                  end.step.empty() ? "" : " (no return from " + end.step + ")")};
    if (end.signal != 0 || end.exit_code != 0)
        return Status{Errc::kInternal,
                      fmt::format("{} crashed ({}){}", what,
                                  end.signal != 0 ? strsignal(end.signal)
                                                  : fmt::format("exit {}", end.exit_code),
                                  end.step.empty() ? "" : " in " + end.step)};
    return end.out;
}

}  // namespace trainrig

#include "core/supervised_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/cancel_signals.h"
#include "core/pipe_pair.h"

namespace trainrig {

namespace {

using Clock = std::chrono::steady_clock;

// Appends what is ready on `fd` to `sink` (up to `max`); false at end of file or on an error.
bool read_some(int fd, std::string& sink, size_t max) {
    char buf[65536];
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) return errno == EINTR || errno == EAGAIN;
    if (got == 0) return false;
    const size_t room = max > sink.size() ? max - sink.size() : 0;
    sink.append(buf, std::min(room, static_cast<size_t>(got)));
    return true;
}

}  // namespace

Result<SupervisedRun> run_supervised(const std::vector<std::string>& argv,
                                     const SupervisedLimits& limits) {
    PipePair out, err;
    if (!out.open() || !err.open()) return errno_status(errno, "create", "a pipe");
    // Its own process group: a terminal's Ctrl-C reaches only us, and we decide what the child
    // is told; a signal to the group reaches whatever the child started.
    auto spawned = spawn_in_own_group(argv, out.w, err.w);
    if (!spawned.ok()) return spawned.status();
    const pid_t pid = *spawned;
    out.close_write();
    err.close_write();

    SupervisedRun run;
    const auto start = Clock::now();
    Clock::time_point asked{}, killed{};
    bool out_open = true, err_open = true, reaped = false;
    int status = 0;
    while (!(reaped && !out_open && !err_open)) {
        const auto now = Clock::now();
        if (asked == Clock::time_point{}) {
            if (limits.stop_after.count() > 0 && now - start >= limits.stop_after)
                run.timed_out = true;
            else if (CancelSignals::flag().load())
                run.interrupted = true;
            if (run.timed_out || run.interrupted) {
                ::kill(-pid, SIGTERM);
                asked = now;
            }
        } else if (!run.killed && now - asked >= limits.grace) {
            ::kill(-pid, SIGKILL);
            run.killed = true;
            killed = now;
        } else if (run.killed && now - killed >= std::chrono::seconds(1)) {
            run.left_behind = !reaped;  // stuck in the kernel: init reaps it when it returns
            break;
        }
        if (out_open || err_open) {
            pollfd fds[2] = {{out_open ? out.r : -1, POLLIN, 0},
                             {err_open ? err.r : -1, POLLIN, 0}};
            const int n = ::poll(fds, 2, 50);
            if (n > 0) {
                if (fds[0].revents) out_open = read_some(out.r, run.output.out, limits.max_output);
                if (fds[1].revents) err_open = read_some(err.r, run.output.err, limits.max_output);
            }
        } else {
            ::usleep(2000);
        }
        if (!reaped) {
            const pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                reaped = true;
            } else if (r < 0 && errno != EINTR) {
                reaped = true;
                status = SIGKILL;  // cannot be waited for: read as killed, never as a clean exit
            }
        }
        // The child has ended but something it started holds the pipes: not ours to wait for.
        if (reaped && (out_open || err_open) && asked != Clock::time_point{} &&
            now - asked >= limits.grace)
            break;
    }
    if (reaped && WIFEXITED(status)) run.output.exit_code = WEXITSTATUS(status);
    if (reaped && WIFSIGNALED(status)) run.output.signal = WTERMSIG(status);
    return run;
}

}  // namespace trainrig

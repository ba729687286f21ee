#include "watch/alert_actions.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace trainrig::watch {
namespace {

constexpr size_t kQueueLimit = 1000;

Status append_line(const std::string& path, const std::string& line) {
    if (path == "-") {
        std::fprintf(stderr, "%s\n", line.c_str());
        return {};
    }
    // Opened per line, so a log rotated away is followed at once.
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) return errno_status(errno, "write", path);
    const std::string data = line + "\n";
    const ssize_t n = ::write(fd, data.data(), data.size());  // O_APPEND: one whole line
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(data.size()))
        return errno_status(n < 0 ? err : EIO, "write", path);
    return {};
}

// Writes to a command's stdin. A command that exits without reading closes the pipe, and the
// write then raises SIGPIPE, which would end the whole daemon: it is blocked for this thread
// around the write and a pending one is taken back, so the write just fails with EPIPE.
void write_to_command(int fd, const std::string& data) {
    sigset_t pipe_signal, previous;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // a command that does not read its stdin is its own business
        off += static_cast<size_t>(n);
    }
    if (off < data.size() && errno == EPIPE) {
        const timespec now{0, 0};
        while (sigtimedwait(&pipe_signal, nullptr, &now) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

Status run_command(const ActionSpec& a, const std::string& json) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return errno_status(errno, "create a pipe for", a.argv[0]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipe_fds[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (const auto& w : a.argv) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(pipe_fds[0]);
    if (rc != 0) {
        ::close(pipe_fds[1]);
        return Status{Errc::kIo, fmt::format("cannot run {}: {}", a.argv[0], std::strerror(rc))};
    }
    // An alert is far smaller than a pipe's buffer: the write does not wait for the reader.
    write_to_command(pipe_fds[1], json + "\n");
    ::close(pipe_fds[1]);
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(a.timeout_seconds);
    int status = 0;
    while (true) {
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return errno_status(errno, "wait for", a.argv[0]);
        if (std::chrono::steady_clock::now() >= until) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return Status{Errc::kIo, fmt::format("{} did not finish within {:g} s and was killed",
                                                 a.argv[0], a.timeout_seconds)};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
    return Status{Errc::kIo,
                  WIFEXITED(status)
                      ? fmt::format("{} exited with {}", a.argv[0], WEXITSTATUS(status))
                      : fmt::format("{} died of signal {}", a.argv[0], WTERMSIG(status))};
}

Status post_webhook(const ActionSpec& a, const std::string& json) {
    // http://host[:port][/path]
    std::string rest = a.url.substr(7);
    const size_t slash = rest.find('/');
    const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
    const std::string authority = rest.substr(0, slash);
    const size_t colon = authority.rfind(':');
    std::string host = authority;
    int port = 80;
    if (colon != std::string::npos && authority.find(']') == std::string::npos) {
        host = authority.substr(0, colon);
        port = std::atoi(authority.c_str() + colon + 1);
    }
    httplib::Client client(host, port);
    const auto secs = static_cast<time_t>(a.timeout_seconds);
    const auto usecs = static_cast<time_t>((a.timeout_seconds - static_cast<double>(secs)) * 1e6);
    client.set_connection_timeout(secs, usecs);
    client.set_read_timeout(secs, usecs);
    client.set_write_timeout(secs, usecs);
    auto res = client.Post(path, json, "application/json");
    if (!res)
        return Status{Errc::kIo,
                      fmt::format("POST {} failed: {}", a.url, httplib::to_string(res.error()))};
    if (res->status < 200 || res->status > 299)
        return Status{Errc::kIo, fmt::format("POST {} answered {}", a.url, res->status)};
    return {};
}

const char* kind_name(ActionSpec::Kind k) {
    switch (k) {
        case ActionSpec::Kind::kLog:
            return "log";
        case ActionSpec::Kind::kCommand:
            return "command";
        case ActionSpec::Kind::kWebhook:
            return "webhook";
    }
    return "action";
}

}  // namespace

Status deliver(const ActionSpec& action, const std::string& json) {
    switch (action.kind) {
        case ActionSpec::Kind::kLog:
            return append_line(action.path, json);
        case ActionSpec::Kind::kCommand:
            return run_command(action, json);
        case ActionSpec::Kind::kWebhook:
            return post_webhook(action, json);
    }
    return {};
}

AlertDispatcher::AlertDispatcher(std::vector<ActionSpec> actions)
    : actions_(std::move(actions)), thread_([this] { loop(); }) {}

AlertDispatcher::~AlertDispatcher() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void AlertDispatcher::send(const Alert& alert) {
    {
        std::lock_guard lock(mutex_);
        if (queue_.size() >= kQueueLimit) {
            ++dropped_;
            return;
        }
        queue_.push_back(alert_json(alert));
    }
    wake_.notify_one();
}

void AlertDispatcher::replace_actions(std::vector<ActionSpec> actions) {
    std::lock_guard lock(mutex_);
    actions_ = std::move(actions);
}

void AlertDispatcher::loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop, and nothing left to deliver
        const std::string json = std::move(queue_.front());
        queue_.pop_front();
        const std::vector<ActionSpec> actions = actions_;
        lock.unlock();
        for (const auto& a : actions) {
            if (Status s = deliver(a, json); s.ok()) {
                ++delivered_;
            } else {
                ++failed_;
                std::fprintf(stderr, "trainrig watch: alert %s action: %s\n", kind_name(a.kind),
                             s.message().c_str());
            }
        }
        lock.lock();
    }
}

}  // namespace trainrig::watch

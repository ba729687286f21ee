#include "train/batch_trial.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <omp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "core/cancel_signals.h"
#include "train/communicator.h"
#include "train/rng.h"

namespace trainrig::train {

namespace {

std::string trial_mib(uint64_t bytes) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// What the CPU trial's child sends its parent: plain bytes, written without allocating.
struct ChildReport {
    int32_t outcome = 0;  // TrialOutcome
    uint64_t peak_bytes = 0;
    double tokens_per_s = 0;
    char detail[480] = {};
};

// The child's pipe and baseline, for the new-handler (it can take no arguments).
int g_child_fd = -1;
uint64_t g_child_baseline = 0;

void send_report(int fd, TrialOutcome o, uint64_t peak, double tps, std::string_view detail) {
    ChildReport r;
    r.outcome = static_cast<int32_t>(o);
    r.peak_bytes = peak;
    r.tokens_per_s = tps;
    std::memcpy(r.detail, detail.data(), std::min(detail.size(), sizeof r.detail - 1));
    const char* p = reinterpret_cast<const char*>(&r);
    size_t left = sizeof r;
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        left -= static_cast<size_t>(n);
    }
}

uint64_t growth_over_baseline() {
    const uint64_t hwm = proc_status_bytes("VmHWM");
    return hwm > g_child_baseline ? hwm - g_child_baseline : 0;
}

// std::new_handler in the child: an allocation beyond the limit ends the trial there and then,
// on whichever thread it happened (an exception cannot leave an OpenMP region).
void child_out_of_memory() {
    send_report(g_child_fd, TrialOutcome::kOom, growth_over_baseline(), 0, "");
    ::_exit(0);
}

// Starts OpenMP's threads, so their stacks are part of the baseline and not of the trial.
void start_openmp_threads() {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    if (n < 1) ::_exit(3);
}

// Peak resident memory starts again from the current (Linux >= 4.0), so that it and the
// baseline start together, after OpenMP's start. Where that fails, fork() started it at the
// resident memory the child inherited, which is below the baseline: the same measurement.
void reset_peak_resident() {
    const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    const ssize_t written = ::write(fd, "5", 1);
    (void)written;
    ::close(fd);
}

[[noreturn]] void run_child(const TrialSetup& setup, int batch, uint64_t limit_bytes, int fd) {
    ::signal(SIGINT, SIG_DFL);  // a Ctrl-C ends the trial; the parent stops the search
    ::signal(SIGTERM, SIG_DFL);
    g_child_fd = fd;
    start_openmp_threads();
    reset_peak_resident();
    g_child_baseline = proc_status_bytes("VmRSS");
    rlimit rl{};
    ::getrlimit(RLIMIT_DATA, &rl);
    const uint64_t want = proc_status_bytes("VmData") + limit_bytes;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min<uint64_t>(want, rl.rlim_max);
    if (::setrlimit(RLIMIT_DATA, &rl) != 0) {
        send_report(fd, TrialOutcome::kError, 0, 0, "setrlimit(RLIMIT_DATA) failed");
        ::_exit(0);
    }
    std::set_new_handler(child_out_of_memory);
    try {
        auto backend = make_cpu_backend(setup.model, setup.opt);
        const Result<double> tps = run_trial_steps(*backend, setup, batch);
        if (!tps.ok())
            send_report(fd, TrialOutcome::kError, growth_over_baseline(), 0,
                        tps.status().message());
        else
            send_report(fd, TrialOutcome::kFits, growth_over_baseline(), *tps, "");
    } catch (const std::bad_alloc&) {
        send_report(fd, TrialOutcome::kOom, growth_over_baseline(), 0, "");
    } catch (const std::exception& e) {
        send_report(fd, TrialOutcome::kError, growth_over_baseline(), 0, e.what());
    }
    ::_exit(0);
}

std::string signal_text(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

uint64_t proc_status_bytes(const char* field) {
    char buf[8192];
    const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t len = 0;
    while (len < sizeof buf - 1) {
        const ssize_t n = ::read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += static_cast<size_t>(n);
    }
    ::close(fd);
    buf[len] = '\0';
    const size_t flen = std::strlen(field);
    for (const char* line = buf; *line;) {
        if (std::strncmp(line, field, flen) == 0 && line[flen] == ':') {
            uint64_t kib = 0;
            for (const char* p = line + flen + 1; *p && *p != '\n'; ++p)
                if (*p >= '0' && *p <= '9') kib = kib * 10 + static_cast<uint64_t>(*p - '0');
            return kib * 1024;
        }
        const char* nl = std::strchr(line, '\n');
        if (!nl) break;
        line = nl + 1;
    }
    return 0;
}

Result<double> run_trial_steps(Backend& backend, const TrialSetup& setup, int batch) {
    using Clock = std::chrono::steady_clock;
    const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(setup.seq);
    // One stream of n + 1 tokens: the targets are the inputs shifted by one, as in training.
    std::vector<uint32_t> tokens(n + 1);
    Rng rng(setup.seed);
    const uint64_t vocab = static_cast<uint64_t>(setup.model.vocab);
    for (auto& t : tokens) t = static_cast<uint32_t>(rng.next() % vocab);
    TRAINRIG_TRY(backend.init_weights(setup.seed));
    LocalCommunicator comm;
    const int steps = std::max(1, setup.steps);
    double timed_s = 0;
    int timed = 0;
    for (int step = 0; step < steps; ++step) {
        const auto t0 = Clock::now();
        TRAINRIG_TRY(backend.zero_grads());
        TRAINRIG_TRY(backend.forward(tokens.data(), tokens.data() + 1, batch, setup.seq));
        TRAINRIG_TRY(backend.backward(1.0f, true));
        TRAINRIG_TRY(backend.all_reduce_grads(comm));
        const Result<double> norm = backend.grad_norm();
        if (!norm.ok()) return norm.status();
        TRAINRIG_TRY(backend.update(setup.opt.lr, step + 1, *norm));
        TRAINRIG_TRY(backend.take_device_times());  // waits for the queued work
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (step > 0 || steps == 1) {
            timed_s += s;
            ++timed;
        }
    }
    return timed_s > 0 ? static_cast<double>(n) * timed / timed_s : 0.0;
}

bool is_device_oom(const Status& s) {
    if (s.ok()) return false;
    const std::string& m = s.message();
    auto has = [&](std::string_view x) { return m.find(x) != std::string::npos; };
    if (s.code() == Errc::kIo) return has(": out of memory (") || has("CUBLAS_STATUS_ALLOC_FAILED");
    if (s.code() == Errc::kInvalidInput)
        return m.starts_with("this run needs ") && has(" of GPU memory ") &&
               has(" is free on the GPU");
    return false;
}

TrialResult run_device_trial(const TrialSetup& setup, int batch, const MakeBackend& make) {
    TrialResult r;
    auto failed = [&r](const Status& s) {
        r.outcome = is_device_oom(s) ? TrialOutcome::kOom : TrialOutcome::kError;
        r.detail = s.message();
        return r;
    };
    auto made = make(setup.model, setup.opt, batch, setup.seq);
    if (!made.ok()) return failed(made.status());
    std::unique_ptr<Backend> backend = std::move(made).value();
    const Result<double> tps = run_trial_steps(*backend, setup, batch);
    r.peak_bytes = backend->peak_memory_bytes();
    backend.reset();  // the device's memory is free again before the next size
    if (!tps.ok()) return failed(tps.status());
    r.outcome = TrialOutcome::kFits;
    r.tokens_per_s = *tps;
    return r;
}

TrialResult run_cpu_trial(const TrialSetup& setup, int batch, uint64_t limit_bytes) {
    TrialResult r;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        r.detail = fmt::format("pipe() failed: {}", std::strerror(errno));
        return r;
    }
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t pid = ::fork();
    if (pid < 0) {
        r.detail = fmt::format("fork() failed: {}", std::strerror(errno));
        ::close(fds[0]);
        ::close(fds[1]);
        return r;
    }
    if (pid == 0) {
        ::close(fds[0]);
        run_child(setup, batch, limit_bytes, fds[1]);
    }
    ::close(fds[1]);
    ChildReport report;
    size_t got = 0;
    char* p = reinterpret_cast<char*>(&report);
    bool stopped = false;  // asked to stop (Ctrl-C, SIGTERM): the child was killed here
    while (got < sizeof report) {
        const ssize_t n = ::read(fds[0], p + got, sizeof report - got);
        if (n < 0 && errno == EINTR) {
            if (CancelSignals::received() != 0 && !stopped) {
                ::kill(pid, SIGKILL);
                stopped = true;
            }
            continue;
        }
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof report) {
        report.detail[sizeof report.detail - 1] = '\0';
        r.outcome = static_cast<TrialOutcome>(report.outcome);
        r.peak_bytes = report.peak_bytes;
        r.tokens_per_s = report.tokens_per_s;
        r.detail = report.detail;
        if (r.outcome == TrialOutcome::kOom)
            r.detail = fmt::format("an allocation failed with {} held, {} allowed (RLIMIT_DATA)",
                                   trial_mib(r.peak_bytes), trial_mib(limit_bytes));
        return r;
    }
    if (stopped) {
        r.detail = "interrupted";
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        r.outcome = TrialOutcome::kOom;
        r.detail = fmt::format(
            "killed by SIGKILL, most likely by the kernel's out-of-memory killer: the machine had "
            "less memory free than the {} allowed",
            trial_mib(limit_bytes));
    } else if (WIFSIGNALED(status)) {
        r.detail = fmt::format("the trial's process ended by {}", signal_text(WTERMSIG(status)));
    } else {
        r.detail = fmt::format("the trial's process exited {} without a report",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return r;
}

}  // namespace trainrig::train

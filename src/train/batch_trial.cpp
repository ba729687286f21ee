#include "train/batch_trial.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <omp.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "train/communicator.h"
#include "train/rng.h"

namespace trainrig::train {

namespace {

std::string trial_mib(uint64_t bytes) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// What a trial's child sends its parent: plain bytes, written without allocating.
struct ChildReport {
    int32_t outcome = 0;  // TrialOutcome
    uint64_t peak_bytes = 0;
    double tokens_per_s = 0;
    char detail[480] = {};
};

// The CPU child's channel and baseline, for the new-handler (it can take no arguments).
IsolatedChannel* g_child_channel = nullptr;
uint64_t g_child_baseline = 0;

void send_report(IsolatedChannel& ch, TrialOutcome o, uint64_t peak, double tps,
                 std::string_view detail) {
    ChildReport r;
    r.outcome = static_cast<int32_t>(o);
    r.peak_bytes = peak;
    r.tokens_per_s = tps;
    std::memcpy(r.detail, detail.data(), std::min(detail.size(), sizeof r.detail - 1));
    ch.send(&r, sizeof r);
}

std::optional<TrialResult> read_report(const std::string& bytes) {
    if (bytes.size() != sizeof(ChildReport)) return std::nullopt;
    ChildReport r;
    std::memcpy(&r, bytes.data(), sizeof r);
    r.detail[sizeof r.detail - 1] = '\0';
    if (r.outcome < 0 || r.outcome > static_cast<int32_t>(TrialOutcome::kTimedOut))
        return std::nullopt;
    return TrialResult{static_cast<TrialOutcome>(r.outcome), r.peak_bytes, r.tokens_per_s,
                       r.detail};
}

uint64_t growth_over_baseline() {
    const uint64_t hwm = proc_status_bytes("VmHWM");
    return hwm > g_child_baseline ? hwm - g_child_baseline : 0;
}

// std::new_handler in the child: an allocation beyond the limit ends the trial there and then,
// on whichever thread it happened (an exception cannot leave an OpenMP region).
void child_out_of_memory() {
    send_report(*g_child_channel, TrialOutcome::kOom, growth_over_baseline(), 0, "");
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

void run_cpu_child(const TrialSetup& setup, int batch, uint64_t limit_bytes, IsolatedChannel& ch) {
    g_child_channel = &ch;
    start_openmp_threads();
    reset_peak_resident();
    g_child_baseline = proc_status_bytes("VmRSS");
    rlimit rl{};
    ::getrlimit(RLIMIT_DATA, &rl);
    const uint64_t want = proc_status_bytes("VmData") + limit_bytes;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min<uint64_t>(want, rl.rlim_max);
    if (::setrlimit(RLIMIT_DATA, &rl) != 0)
        return send_report(ch, TrialOutcome::kError, 0, 0, "setrlimit(RLIMIT_DATA) failed");
    std::set_new_handler(child_out_of_memory);
    try {
        ch.step("building the model");
        auto backend = make_cpu_backend(setup.model, setup.opt);
        const Result<double> tps =
            run_trial_steps(*backend, setup, batch, [&ch](std::string_view s) { ch.step(s); });
        if (!tps.ok())
            send_report(ch, TrialOutcome::kError, growth_over_baseline(), 0,
                        tps.status().message());
        else
            send_report(ch, TrialOutcome::kFits, growth_over_baseline(), *tps, "");
    } catch (const std::bad_alloc&) {
        send_report(ch, TrialOutcome::kOom, growth_over_baseline(), 0, "");
    }
}

void run_device_child(const TrialSetup& setup, int batch, const MakeBackend& make,
                      IsolatedChannel& ch) {
    auto failed = [&ch](const Status& s, uint64_t peak) {
        send_report(ch, is_device_oom(s) ? TrialOutcome::kOom : TrialOutcome::kError, peak, 0,
                    s.message());
    };
    ch.step(fmt::format("opening the device and building the model for batch {}", batch));
    auto made = make(setup.model, setup.opt, batch, setup.seq);
    if (!made.ok()) return failed(made.status(), 0);
    std::unique_ptr<Backend> backend = std::move(made).value();
    const Result<double> tps =
        run_trial_steps(*backend, setup, batch, [&ch](std::string_view s) { ch.step(s); });
    const uint64_t peak = backend->peak_memory_bytes();
    ch.step("freeing the model's device memory");
    backend.reset();
    if (!tps.ok()) return failed(tps.status(), peak);
    send_report(ch, TrialOutcome::kFits, peak, *tps, "");
}

// Runs `body` as a trial's child and judges how it ended: the one way both backends' trials run.
TrialResult run_trial_child(const std::function<void(IsolatedChannel&)>& body,
                            const TrialLimits& limits) {
    auto end = run_in_child(
        [&body](IsolatedChannel& ch) {
            // The parent decides what a Ctrl-C does to the trial (it kills the child's group).
            ::signal(SIGINT, SIG_DFL);
            ::signal(SIGTERM, SIG_DFL);
            try {
                body(ch);
            } catch (const std::exception& e) {
                send_report(ch, TrialOutcome::kError, 0, 0, e.what());
            }
        },
        limits.timeout, std::chrono::milliseconds(0));
    if (!end.ok()) return TrialResult{TrialOutcome::kError, 0, 0, end.status().message()};
    return judge_trial(read_report(end->out), *end, limits);
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

Result<double> run_trial_steps(Backend& backend, const TrialSetup& setup, int batch,
                               const std::function<void(std::string_view)>& begin) {
    using Clock = std::chrono::steady_clock;
    const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(setup.seq);
    // One stream of n + 1 tokens: the targets are the inputs shifted by one, as in training.
    std::vector<uint32_t> tokens(n + 1);
    Rng rng(setup.seed);
    const uint64_t vocab = static_cast<uint64_t>(setup.model.vocab);
    for (auto& t : tokens) t = static_cast<uint32_t>(rng.next() % vocab);
    if (begin) begin("initialising the weights");
    TRAINRIG_TRY(backend.init_weights(setup.seed));
    LocalCommunicator comm;
    const int steps = std::max(1, setup.steps);
    double timed_s = 0;
    int timed = 0;
    for (int step = 0; step < steps; ++step) {
        if (begin) begin(fmt::format("step {} of {}", step + 1, steps));
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

TrialResult judge_trial(const std::optional<TrialResult>& reported, const IsolatedEnd& end,
                        const TrialLimits& limits) {
    TrialResult r;
    const std::string where = end.step.empty() ? "" : " in " + end.step;
    if (end.interrupted) {
        r.detail = "interrupted";
    } else if (end.timed_out) {
        r.outcome = TrialOutcome::kTimedOut;
        r.detail = fmt::format("no return from {} within {}; its processes were killed",
                               end.step.empty() ? "the trial's start" : end.step,
                               format_seconds(limits.timeout));
    } else if (reported) {
        r = *reported;
        if (r.outcome == TrialOutcome::kOom && limits.data_limit != 0)
            r.detail = fmt::format("an allocation failed with {} held, {} allowed (RLIMIT_DATA)",
                                   trial_mib(r.peak_bytes), trial_mib(limits.data_limit));
    } else if (end.signal == SIGKILL && limits.data_limit != 0) {
        r.outcome = TrialOutcome::kOom;
        r.detail = fmt::format(
            "killed by SIGKILL, most likely by the kernel's out-of-memory killer: the machine had "
            "less memory free than the {} allowed",
            trial_mib(limits.data_limit));
    } else if (end.signal != 0) {
        r.detail = fmt::format("the trial's process ended by {}{}", signal_text(end.signal), where);
    } else {
        r.detail =
            fmt::format("the trial's process exited {} without a report{}", end.exit_code, where);
    }
    return r;
}

TrialResult run_device_trial(const TrialSetup& setup, int batch, const MakeBackend& make,
                             std::chrono::milliseconds timeout) {
    return run_trial_child([&](IsolatedChannel& ch) { run_device_child(setup, batch, make, ch); },
                           {timeout, 0});
}

TrialResult run_cpu_trial(const TrialSetup& setup, int batch, uint64_t limit_bytes,
                          std::chrono::milliseconds timeout) {
    return run_trial_child(
        [&](IsolatedChannel& ch) { run_cpu_child(setup, batch, limit_bytes, ch); },
        {timeout, limit_bytes});
}

Result<DeviceInfo> describe_device_in_child(const std::function<Result<DeviceInfo>()>& describe,
                                            std::chrono::milliseconds timeout) {
    auto text = run_isolated(
        [&describe](IsolatedChannel& ch) {
            ch.step("opening the device");
            const Result<DeviceInfo> d = describe();
            ch.out() = (d.ok() ? nlohmann::json{{"device", device_info_json(*d)}}
                               : nlohmann::json{{"errc", errc_name(d.status().code())},
                                                {"message", d.status().message()},
                                                {"next_step", d.status().next_step()}})
                           .dump();
        },
        timeout, "the device");
    if (!text.ok()) return text.status();
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object()) return Status(Errc::kInternal, "the device's description is not JSON");
    if (j.contains("device")) return device_info_from_json(j["device"]);
    return Status(errc_from_name(j.value("errc", "internal")), j.value("message", ""),
                  j.value("next_step", ""));
}

}  // namespace trainrig::train

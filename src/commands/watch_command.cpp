// `trainrig watch`: a foreground monitoring daemon (docs/watch.md). Every --interval it reads
// each GPU through NVML (a hung call never stalls it) and the new kernel-log records; it serves
// the result as Prometheus metrics on --listen and, with --textfile, writes it for
// node_exporter. SIGTERM or SIGINT stops it cleanly. `--once` reads one tick and prints it.
#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "core/atomic_file.h"
#include "core/cancel_signals.h"
#include "watch/alert_actions.h"
#include "watch/alert_config.h"
#include "watch/metrics_render.h"
#include "watch/metrics_server.h"
#include "watch/render_once.h"
#include "watch/watcher.h"

namespace trainrig {
namespace {

using namespace watch;

double epoch_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Sleeps until `until` (CLOCK_MONOTONIC seconds) or a stop signal, whichever is first: a signal
// interrupts clock_nanosleep, which is never restarted.
void sleep_until(double until, const std::atomic<bool>& stop) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(until);
    ts.tv_nsec = static_cast<long>((until - std::floor(until)) * 1e9);
    while (!stop.load() && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

double monotonic_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// One line on stderr per kernel event, as it is found.
void log_event(const WatchView& v, const KernelEvent& e) {
    const int g = gpu_for_device(v.gpus, e.device);
    std::fprintf(stderr, "trainrig watch: kernel log: %s%s: %s\n",
                 g >= 0 ? fmt::format("GPU {} ", g).c_str() : "", e.device.c_str(),
                 e.message.c_str());
}

// SIGHUP as a request to reload the rules, taken by the loop at its next tick.
class ReloadSignal {
public:
    ReloadSignal() {
        struct sigaction sa {};
        sa.sa_handler = [](int) { requested().store(true); };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGHUP, &sa, &old_);
    }
    ~ReloadSignal() { sigaction(SIGHUP, &old_, nullptr); }
    bool take() { return requested().exchange(false); }

private:
    static std::atomic<bool>& requested() {
        static std::atomic<bool> flag{false};
        return flag;
    }
    struct sigaction old_ {};
};

class WatchCommand : public Command {
public:
    const char* name() const override { return "watch"; }
    const char* summary() const override {
        return "Monitor the GPUs and the kernel log; serve Prometheus metrics";
    }

    void declare(CLI::App& app) override {
        app.add_option("--interval", options_.interval, "Seconds between ticks (may be under 1)")
            ->check(CLI::Range(0.05, 3600.0))
            ->capture_default_str();
        app.add_option("--call-timeout", options_.call_deadline,
                       "Seconds an NVML tick may take before the GPU is reported hung")
            ->check(CLI::Range(0.05, 600.0))
            ->capture_default_str();
        app.add_option("--listen", listen_,
                       "Serve /metrics and /healthz on HOST:PORT (port 0: any free port)")
            ->capture_default_str();
        app.add_flag("--no-listen", no_listen_, "Serve nothing over HTTP");
        app.add_option("--textfile", textfile_dir_,
                       "Also write the metrics to DIR/trainrig.prom after every tick, atomically "
                       "(node_exporter's textfile collector)")
            ->type_name("DIR");
        app.add_option("--duration", duration_,
                       "Stop after this many seconds (0: run until stopped)")
            ->check(CLI::Range(0.0, 1e9));
        app.add_flag("--once", once_,
                     "Read one tick, print it, and exit (1 when a GPU is not ok or NVML fails)");
        app.add_flag("--json", json_, "With --once: write trainrig.watch.sample JSON");
        app.add_flag("--no-kernel-log", no_kmsg_, "Do not follow the kernel log");
        app.add_option("--rules", rules_path_,
                       "Alert rules and actions (TOML, docs/watch.md); SIGHUP reads it again")
            ->type_name("FILE");
        app.add_option("--root", options_.root,
                       "Read the machine under DIR: the kernel log is DIR/dev/kmsg, a file "
                       "followed as it grows")
            ->envname("TRAINRIG_ROOT")
            ->type_name("DIR");
    }

    int run(const GlobalOptions&) override {
        options_.kernel_log = !no_kmsg_;
        if (json_ && !once_)
            return print_error(name(), {Errc::kInvalidInput, "--json needs --once"});
        if (!textfile_dir_.empty() && !std::filesystem::is_directory(textfile_dir_))
            return print_error(
                name(),
                {Errc::kNotFound, fmt::format("--textfile {} is not a directory", textfile_dir_)});
        std::optional<ListenAddress> address;
        if (!once_ && !no_listen_) {
            auto a = parse_listen_address(listen_);
            if (!a) return print_error(name(), a.status());
            address = *a;
        }
        AlertConfig config = default_alert_config();
        if (!rules_path_.empty()) {
            auto loaded = load_alert_config(rules_path_);
            if (!loaded) return print_error(name(), loaded.status());
            config = std::move(loaded).value();
        }
        Watcher watcher(options_, config.rules);
        if (once_) return run_once(watcher);

        CancelSignals signals;
        ReloadSignal reload;
        AlertDispatcher dispatcher(config.actions);
        const auto view = watcher.view();
        if (!view->nvml_problem.empty())
            std::fprintf(stderr, "trainrig watch: no GPU telemetry: %s\n",
                         view->nvml_problem.c_str());
        if (!view->kmsg_followed && options_.kernel_log)
            std::fprintf(stderr, "trainrig watch: kernel log not followed: %s\n",
                         view->kmsg_problem.c_str());
        std::unique_ptr<MetricsServer> server;
        if (address) {
            auto s = MetricsServer::start(
                *address,
                [&watcher, &dispatcher] {
                    return render_metrics(*watcher.view(), epoch_now()) +
                           render_notifications(dispatcher.delivered(), dispatcher.failed(),
                                                dispatcher.dropped());
                },
                [&watcher] { return watch_healthy(*watcher.view(), epoch_now()); });
            if (!s) return print_error(name(), s.status());
            server = std::move(s).value();
            std::fprintf(
                stderr, "trainrig watch: %zu GPUs, every %g s, metrics on http://%s:%d/metrics\n",
                view->gpus.size(), options_.interval, address->host.c_str(), server->port());
        }
        const double begin = monotonic_now();
        double next = begin;
        while (!CancelSignals::flag().load()) {
            if (reload.take()) reload_rules(watcher, dispatcher);
            const Watcher::Tick tick = watcher.tick(epoch_now());
            for (const auto& e : tick.events) log_event(*watcher.view(), e);
            for (const auto& a : tick.alerts) dispatcher.send(a);
            if (!textfile_dir_.empty()) write_textfile(*watcher.view());
            if (duration_ > 0 && monotonic_now() - begin >= duration_) break;
            next += options_.interval;
            const double now = monotonic_now();
            if (next < now) next = now;  // late: start the next tick now, do not catch up
            sleep_until(next, CancelSignals::flag());
        }
        return 0;
    }

private:
    // SIGHUP: read the rules file again; a file with a mistake keeps the rules in force.
    void reload_rules(Watcher& watcher, AlertDispatcher& dispatcher) {
        if (rules_path_.empty()) return;
        auto loaded = load_alert_config(rules_path_);
        if (!loaded) {
            std::fprintf(stderr, "trainrig watch: rules not reloaded, the old ones stay: %s\n",
                         loaded.status().message().c_str());
            return;
        }
        for (const auto& a : watcher.replace_rules(loaded->rules, epoch_now())) dispatcher.send(a);
        dispatcher.replace_actions(loaded->actions);
        std::fprintf(stderr, "trainrig watch: reloaded %zu rules and %zu actions from %s\n",
                     loaded->rules.size(), loaded->actions.size(), rules_path_.c_str());
    }

    int run_once(Watcher& watcher) {
        const auto events = watcher.tick(epoch_now()).events;
        const auto view = watcher.view();
        if (json_)
            std::fputs((view_to_json(*view, events).dump(2) + "\n").c_str(), stdout);
        else
            std::fputs(render_once_table(*view, events).c_str(), stdout);
        if (!textfile_dir_.empty()) write_textfile(*view);
        if (!view->nvml_problem.empty() && !view->nvml_absent) return 1;
        for (const auto& g : view->last->gpus)
            if (g.state != GpuState::kOk) return 1;
        return 0;
    }

    void write_textfile(const WatchView& view) {
        const auto path = std::filesystem::path(textfile_dir_) / "trainrig.prom";
        if (Status s = write_file_atomic(path, render_metrics(view, epoch_now())); !s.ok()) {
            // Said once per failure streak, not every tick.
            if (!textfile_failing_)
                std::fprintf(stderr, "trainrig watch: cannot write %s: %s\n", path.c_str(),
                             s.message().c_str());
            textfile_failing_ = true;
        } else {
            textfile_failing_ = false;
        }
    }

    WatchOptions options_;
    std::string listen_ = "127.0.0.1:9402";
    bool no_listen_ = false;
    std::string textfile_dir_;
    double duration_ = 0;
    bool once_ = false;
    bool json_ = false;
    bool no_kmsg_ = false;
    bool textfile_failing_ = false;
    std::string rules_path_;
};

}  // namespace

std::unique_ptr<Command> make_watch_command() { return std::make_unique<WatchCommand>(); }

}  // namespace trainrig

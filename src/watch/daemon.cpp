#include "watch/daemon.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/cancel_signals.h"
#include "core/clock.h"
#include "core/reload_signal.h"
#include "watch/alert_actions.h"
#include "watch/maintenance_gate.h"
#include "watch/metrics_render.h"
#include "watch/textfile.h"

namespace trainrig::watch {

namespace {

// One line on stderr per kernel event, as it is found.
void log_event(const WatchView& v, const KernelEvent& e) {
    const int g = gpu_for_device(v.gpus, e.device);
    std::fprintf(stderr, "trainrig watch: kernel log: %s%s: %s\n",
                 g >= 0 ? fmt::format("GPU {} ", g).c_str() : "", e.device.c_str(),
                 e.message.c_str());
}

// -v while running: one line per tick on stderr.
void log_tick(const WatchView& view, const Watcher::Tick& tick) {
    std::fprintf(stderr,
                 "trainrig watch: tick: %zu GPUs, %zu kernel events, %zu alerts changed, %zu "
                 "active\n",
                 view.gpus.size(), tick.events.size(), tick.alerts.size(), view.alerts.size());
}

// SIGHUP: read the rules file again; a file with a mistake keeps the rules in force.
void reload_rules(const std::string& path, Watcher& watcher, AlertDispatcher& dispatcher) {
    if (path.empty()) return;
    auto loaded = load_alert_config(path);
    if (!loaded) {
        std::fprintf(stderr, "trainrig watch: rules not reloaded, the old ones stay: %s\n",
                     loaded.status().message().c_str());
        return;
    }
    for (const auto& a : watcher.replace_rules(loaded->rules, epoch_now())) dispatcher.send(a);
    dispatcher.replace_actions(loaded->actions);
    std::fprintf(stderr, "trainrig watch: reloaded %zu rules and %zu actions from %s\n",
                 loaded->rules.size(), loaded->actions.size(), path.c_str());
}

// The maintenance window, read at every tick; its start, its end and a file that cannot be read
// are each said once on stderr.
class MaintenanceFile {
public:
    std::optional<MaintenanceWindow> read(const std::string& root) {
        const auto now = static_cast<std::time_t>(epoch_now());
        auto w = active_maintenance(root, now);
        if (!w) {
            if (w.status().message() != problem_)
                std::fprintf(stderr, "trainrig watch: %s; alerts go out as usual\n",
                             w.status().message().c_str());
            problem_ = w.status().message();
            return std::nullopt;
        }
        problem_.clear();
        if (w->has_value() != active_)
            std::fprintf(stderr, "trainrig watch: %s\n",
                         w->has_value() ? (maintenance_line(**w, now) +
                                           ": new alerts are held back until it ends")
                                              .c_str()
                                        : "the maintenance window is over: alerts go out again, "
                                          "with those still firing from it");
        active_ = w->has_value();
        return *w;
    }

private:
    bool active_ = false;
    std::string problem_;
};

}  // namespace

Status run_daemon(Watcher& watcher, const AlertConfig& config, std::unique_ptr<HistorySink> history,
                  const DaemonOptions& o) {
    CancelSignals signals;
    ReloadSignal reload;
    AlertDispatcher dispatcher(config.actions);
    const auto view = watcher.view();
    if (!view->nvml_problem.empty())
        std::fprintf(stderr, "trainrig watch: no GPU telemetry: %s\n", view->nvml_problem.c_str());
    if (!view->kmsg_followed && o.kernel_log)
        std::fprintf(stderr, "trainrig watch: kernel log not followed: %s\n",
                     view->kmsg_problem.c_str());
    std::unique_ptr<MetricsServer> server;
    if (o.listen) {
        auto s = MetricsServer::start(
            *o.listen,
            [&watcher, &dispatcher, &history] {
                LoopCounters c{dispatcher.delivered(),
                               dispatcher.failed(),
                               dispatcher.dropped(),
                               history ? history->ok() : 0,
                               history ? history->failed() : 0,
                               history != nullptr};
                return render_metrics(*watcher.view(), epoch_now()) + render_loop_counters(c);
            },
            [&watcher] { return watch_healthy(*watcher.view(), epoch_now()); });
        if (!s) return s.status();
        server = std::move(s).value();
        std::fprintf(stderr,
                     "trainrig watch: %zu GPUs, every %g s, metrics on http://%s:%d/metrics\n",
                     view->gpus.size(), o.interval, o.listen->host.c_str(), server->port());
    }
    MaintenanceGate gate;
    MaintenanceFile maintenance;
    std::optional<TextfileWriter> textfile;
    if (!o.textfile_dir.empty()) textfile.emplace(o.textfile_dir);
    const double begin = monotonic_now();
    double next = begin;
    while (!CancelSignals::flag().load()) {
        if (reload.take()) reload_rules(o.rules_path, watcher, dispatcher);
        const Watcher::Tick tick = watcher.tick(epoch_now());
        for (const auto& e : tick.events) log_event(*watcher.view(), e);
        const auto window = maintenance.read(o.root);
        for (const auto& a : gate.pass(tick.alerts, watcher.view()->alerts, window))
            dispatcher.send(a);
        if (history) history->write(watcher, tick);
        if (o.verbose) log_tick(*watcher.view(), tick);
        if (textfile) textfile->write(*watcher.view());
        if (o.duration > 0 && monotonic_now() - begin >= o.duration) break;
        next += o.interval;
        const double now = monotonic_now();
        if (next < now) next = now;  // late: start the next tick now, do not catch up
        sleep_until(next, CancelSignals::flag());
    }
    return ok_status();
}

}  // namespace trainrig::watch

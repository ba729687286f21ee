// `trainrig watch`: a foreground monitoring daemon (docs/watch.md). Every --interval it reads
// each GPU through NVML (a hung call never stalls it) and the new kernel-log records; it serves
// the result as Prometheus metrics on --listen and, with --textfile, writes it for
// node_exporter. SIGTERM or SIGINT stops it cleanly. `--once` reads one tick and prints it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/clock.h"
#include "core/text.h"
#include "watch/alert_config.h"
#include "watch/daemon.h"
#include "watch/history_sink.h"
#include "watch/metrics_server.h"
#include "watch/render_once.h"
#include "watch/replay.h"
#include "watch/textfile.h"
#include "watch/watch_report.h"
#include "watch/watcher.h"

namespace trainrig {
namespace {

using namespace watch;

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
                     "Read one tick, judge it as doctor would, print it, and exit: 1 on a "
                     "critical alert, a GPU that is not ok or NVML failing");
        app.add_flag("--strict", strict_, "Exit 1 on a warning too (with --once: a warning alert)");
        declare_json_option(app, json_, "trainrig.watch.sample; with --once");
        declare_output_options(app, output_);
        declare_verbose_option(app, verbose_,
                               "with --once every field read from each GPU; running, a line per "
                               "tick on stderr");
        declare_help_footer(
            app,
            {"trainrig watch                          # metrics on http://127.0.0.1:9402/metrics",
             "trainrig watch --once -v                # one tick, judged as doctor would",
             "trainrig watch --rules alerts.toml --db watch.db --textfile /var/lib/node_exporter"},
            "Rules, actions and the metrics: docs/watch.md. SIGTERM stops it (exit 143), SIGHUP "
            "reloads --rules.");
        app.add_flag("--no-kernel-log", no_kmsg_, "Do not follow the kernel log");
        app.add_option("--rules", rules_path_,
                       "Alert rules and actions (TOML, docs/watch.md); SIGHUP reads it again")
            ->check(existing_input())
            ->type_name("FILE");
        app.add_option("--root", options_.root,
                       "Read the machine under DIR: the kernel log is DIR/dev/kmsg, a file "
                       "followed as it grows")
            ->envname("TRAINRIG_ROOT")
            ->check(existing_input())
            ->type_name("DIR");
        app.add_option("--db", db_,
                       "Keep every tick and alert in this SQLite file (for `watch report`); the "
                       "kernel log resumes from it after a restart")
            ->type_name("FILE");
        app.add_option("--history-max-age", max_age_, "Drop history older than this (30d, 72h)")
            ->capture_default_str();
        app.add_option("--history-max-mb", max_mb_, "Keep the history under this many MiB")
            ->check(CLI::Range(1.0, 1e7))
            ->capture_default_str();
        report_ = app.add_subcommand("report",
                                     "Summarise a stored run: per-GPU temperature and "
                                     "utilization spread, skew, throttling, alerts");
        report_->add_option("--db", db_, "The history watch --db wrote")
            ->required()
            ->check(existing_input())
            ->type_name("FILE");
        report_->add_option("--since", since_, "How far back (72h, 7d, 90m)")
            ->capture_default_str();
        declare_json_option(*report_, json_, "trainrig.watch.report");
        declare_output_options(*report_, output_);
        declare_verbose_option(*report_, verbose_, "the remedy under each alert of the timeline");
        declare_help_footer(*report_, {"trainrig watch report --db watch.db --since 72h",
                                       "trainrig watch report --db watch.db --json -o week.json"});
        replay_ = app.add_subcommand("replay",
                                     "Judge a time line of ticks (watch --once --json documents) "
                                     "with the alert rules, on the ticks' own clock");
        replay_->add_option("timeline", timeline_, "The ticks, oldest first")
            ->required()
            ->check(existing_input())
            ->type_name("FILE");
        replay_->add_option("--rules", rules_path_, "Alert rules (TOML, docs/watch.md)")
            ->check(existing_input())
            ->type_name("FILE");
        replay_->add_flag("--strict", strict_, "Exit 1 on a warning too (a warning alert fired)");
        declare_json_option(*replay_, json_, "trainrig.watch.replay");
        declare_output_options(*replay_, output_);
        declare_verbose_option(*replay_, verbose_, "the remedy of each rule that fired");
        declare_help_footer(
            *replay_,
            {"for i in $(seq 600); do trainrig watch --once --json >> ticks.json; sleep 1; done",
             "trainrig watch replay --rules alerts.toml ticks.json"},
            "Exit 1 when a critical alert fired (a warning too with --strict). docs/watch.md, "
            "\"Replaying a time line\".");
    }

    int run(const GlobalOptions&) override {
        if (report_->parsed()) return run_report();
        if (replay_->parsed()) return run_replay();
        options_.kernel_log = !no_kmsg_;
        options_.nvml_xid_events = !once_;  // one tick would not wait for them
        options_.instant = once_;
        const auto max_age = parse_period(max_age_);
        if (!max_age || *max_age <= 0)
            return print_error(name(), {Errc::kInvalidInput,
                                        fmt::format("--history-max-age {} is not a period such "
                                                    "as 30d or 72h",
                                                    max_age_)});
        if ((json_ || output_.output) && !once_)
            return print_error(name(), {Errc::kInvalidInput,
                                        "--json and -o write the result of --once; add --once"});
        if (strict_ && !once_)
            return print_error(name(), {Errc::kInvalidInput, "--strict needs --once"});
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
        auto config = alert_config();
        if (!config) return print_error(name(), config.status());
        Watcher watcher(options_, config->rules);
        if (once_) return run_once(watcher);

        std::unique_ptr<HistorySink> history;
        if (!db_.empty()) {
            HistoryLimits limits;
            limits.max_age_seconds = *max_age;
            limits.max_bytes = static_cast<uint64_t>(max_mb_ * 1048576.0);
            auto h = History::open(db_, limits);
            if (!h) return print_error(name(), h.status());
            history = std::make_unique<HistorySink>(std::move(h).value());
            history->resume(watcher);
        }
        DaemonOptions daemon;
        daemon.interval = options_.interval;
        daemon.duration = duration_;
        daemon.listen = address;
        daemon.textfile_dir = textfile_dir_;
        daemon.rules_path = rules_path_;
        daemon.kernel_log = options_.kernel_log;
        daemon.verbose = verbose_;
        daemon.root = options_.root;
        if (auto s = run_daemon(watcher, *config, std::move(history), daemon); !s.ok())
            return print_error(name(), s);
        return 0;
    }

private:
    int run_report() {
        const auto period = parse_period(since_);
        if (!period)
            return print_error(
                "watch report",
                {Errc::kInvalidInput,
                 fmt::format("--since {} is not a period such as 72h or 7d", since_)});
        if (!std::filesystem::exists(db_))
            return print_error("watch report",
                               {Errc::kNotFound, fmt::format("--db {} does not exist", db_)});
        auto h = History::open_to_read(db_);
        if (!h) return print_error("watch report", h.status());
        const double now = epoch_now();
        auto r = build_report(h.value(), db_, now - *period, now);
        if (!r) return print_error("watch report", r.status());
        std::string text;
        if (json_) {
            text = json_result(report_json(*r), "watch report", 0);
        } else {
            text = render_report_text(*r);
            if (verbose_) text += remedies(r->timeline);
        }
        return emit_result("watch report", output_, text, 0);
    }

    // --rules, or the defaults.
    Result<AlertConfig> alert_config() const {
        if (rules_path_.empty()) return default_alert_config();
        return load_alert_config(rules_path_);
    }

    // -v: each rule's remedy, once, under the alerts.
    static std::string remedies(const std::vector<Alert>& alerts) {
        std::string out;
        std::set<std::string> shown;
        for (const auto& a : alerts)
            if (!a.remedy.empty() && shown.insert(a.rule).second)
                out += fmt::format("{}: {}\n", a.rule, a.remedy);
        return out;
    }

    int run_replay() {
        auto config = alert_config();
        if (!config) return print_error("watch replay", config.status());
        std::ifstream in(timeline_, std::ios::binary);
        if (!in)
            return print_error("watch replay",
                               {Errc::kIo, fmt::format("cannot read {}", timeline_)});
        auto r = replay_timeline(in, timeline_, config->rules);
        if (!r) return print_error("watch replay", r.status());
        int code = 0;
        for (const auto& a : r->alerts)
            if (a.firing && (a.severity == Severity::kCritical ||
                             (strict_ && a.severity == Severity::kWarning)))
                code = 1;
        std::string text =
            json_ ? json_result(replay_json(*r), "watch replay", code) : render_replay_text(*r);
        if (verbose_ && !json_) text += remedies(r->alerts);
        return emit_result("watch replay", output_, text, code);
    }

    int run_once(Watcher& watcher) {
        const auto events = watcher.tick(epoch_now()).events;
        const auto view = watcher.view();
        const int code = once_exit_code(*view);
        std::string text;
        if (json_) {
            text = json_result(view_to_json(*view, events), "watch", code);
        } else {
            text = render_once_table(*view, events);
            if (verbose_) text += every_field(view_to_json(*view, events));
        }
        if (auto s = write_output(output_, text); !s.ok()) return print_error(name(), s);
        if (!textfile_dir_.empty()) TextfileWriter(textfile_dir_).write(*view);
        return code;
    }

    // -v with --once: each GPU's fields as read, one per line.
    static std::string every_field(const nlohmann::json& doc) {
        std::string out;
        for (const auto& g : doc.value("gpus", nlohmann::json::array())) {
            out += fmt::format("GPU {}:\n", g.value("index", -1));
            for (const auto& [key, value] : g.items())
                if (key != "index") out += fmt::format("  {:<28} {}\n", key, value.dump());
        }
        return out;
    }

    // As doctor: a critical alert is a failed check, a warning fails under --strict; a GPU not
    // ok or NVML failing (not absent) fails too.
    int once_exit_code(const WatchView& view) const {
        if (!view.nvml_problem.empty() && !view.nvml_absent) return 1;
        for (const auto& g : view.last->gpus)
            if (g.state != GpuState::kOk) return 1;
        for (const auto& a : view.alerts)
            if (a.severity == Severity::kCritical || (strict_ && a.severity == Severity::kWarning))
                return 1;
        return 0;
    }

    WatchOptions options_;
    std::string listen_ = "127.0.0.1:9402";
    bool no_listen_ = false;
    std::string textfile_dir_;
    double duration_ = 0;
    bool once_ = false, strict_ = false;
    bool json_ = false, verbose_ = false;
    OutputOptions output_;
    bool no_kmsg_ = false;
    std::string rules_path_;
    std::string db_;
    std::string max_age_ = "30d";
    double max_mb_ = 2048;
    CLI::App* report_ = nullptr;
    CLI::App* replay_ = nullptr;
    std::string timeline_;
    std::string since_ = "24h";
};

}  // namespace

std::unique_ptr<Command> make_watch_command() { return std::make_unique<WatchCommand>(); }

}  // namespace trainrig

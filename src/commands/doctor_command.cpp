// `trainrig doctor`: judge this machine (or a machine tree, or a saved snapshot) against the
// rules and print one finding per rule, with evidence and remedy.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/root_fs.h"
#include "core/terminal.h"
#include "core/text.h"
#include "core/user_file.h"
#include "doctor/render_json.h"
#include "doctor/render_markdown.h"
#include "doctor/render_table.h"
#include "doctor/report.h"
#include "probe/collect.h"
#include "stack/stack_lock.h"

namespace trainrig {

namespace {

namespace fs = std::filesystem;

Result<Snapshot> load_snapshot(const std::string& path) {
    auto text = read_user_file(path, "--snapshot");
    if (!text) return text.status();
    return snapshot_from_text(*text, path);
}

// The tuning files a lock names, as they are now on the machine (or tree) being judged.
std::map<std::string, std::optional<std::string>> read_profile_files(const StackLock& lock,
                                                                     const fs::path& root) {
    const RootFs rootfs(root);
    std::map<std::string, std::optional<std::string>> out;
    for (const auto& [path, content] : lock.profile) {
        auto text = rootfs.read(path);
        out[path] = text.ok() ? std::optional<std::string>(*text) : std::nullopt;
    }
    return out;
}

Status check_ids(const std::vector<std::string>& ids, const char* option) {
    for (const auto& id : ids)
        if (!find_rule(id))
            return {Errc::kInvalidInput, fmt::format("unknown check id '{}' in {}", id, option),
                    "`trainrig doctor --list` shows the ids"};
    return ok_status();
}

std::string checks_footer() {
    std::string out = "Checks (select with --only/--skip; documented in docs/checks.md):\n";
    for (const auto& r : all_rules()) out += fmt::format("  {:<24} {}\n", r.id, r.title);
    return out;
}

class DoctorCommand : public Command {
public:
    const char* name() const override { return "doctor"; }
    const char* summary() const override {
        return "Check this machine (or a snapshot) and report findings with evidence and remedy";
    }
    void declare(CLI::App& app) override {
        declare_machine_options(app, collect_);
        app.add_option("--snapshot", snapshot_,
                       "Judge a snapshot written by `trainrig collect` instead of a machine")
            ->check(existing_input())
            ->type_name("FILE");
        declare_output_options(app, output_);
        auto* format = app.add_option("--format", format_, "Output format")
                           ->check(CLI::IsMember({"table", "json", "md"}))
                           ->default_str("table");
        declare_json_option(app, json_, "trainrig.doctor; with --list trainrig.doctor.checks");
        // --json is --format json: given with another --format, one of them would be ignored.
        app.get_option("--json")->excludes(format);
        declare_verbose_option(app, verbose_, "the evidence and the remedy under each finding");
        app.add_option("--only", selection_.only, "Run only these checks (comma-separated ids)")
            ->delimiter(',')
            ->type_name("ID,...");
        app.add_option("--skip", selection_.skip, "Do not run these checks (comma-separated ids)")
            ->delimiter(',')
            ->type_name("ID,...");
        app.add_flag("--strict", strict_, "Exit 1 on a warning too");
        declare_expect_gpus(app, expect_gpus_);
        app.add_option("--lock", lock_file_,
                       "Report every version and tuning file that changed since this lock "
                       "(`trainrig tune lock`), as check stack.drift")
            ->check(existing_input())
            ->type_name("FILE");
        app.add_flag("--list", list_, "List the checks and exit");
        declare_help_footer(
            app,
            {"trainrig doctor -v                      # evidence and remedy under each finding",
             "trainrig doctor --json -o report.json   # the trainrig.doctor document",
             "trainrig doctor --data-dir /data --expect-gpus 8 --strict",
             "trainrig doctor --snapshot node07.json  # a snapshot from `trainrig collect`"},
            checks_footer());
    }

    int check(const GlobalOptions& global) override {
        if (list_) return 0;
        if (auto s = check_ids(selection_.only, "--only"); !s.ok()) return print_error(name(), s);
        if (auto s = check_ids(selection_.skip, "--skip"); !s.ok()) return print_error(name(), s);
        // With --snapshot the machine options make no sense on the command line; from the
        // environment (TRAINRIG_ROOT, TRAINRIG_DATA_DIR) they are just ignored.
        if (snapshot_ &&
            (global.typed("--root") || global.typed("--data-dir") || collect_.env_file))
            return print_error(name(), {Errc::kInvalidInput,
                                        "--root, --data-dir and --env-file apply when probing a "
                                        "machine, not to --snapshot (pass them to `trainrig "
                                        "collect`)"});
        if (lock_file_) {
            auto text = read_user_file(*lock_file_, "--lock", 16u << 20);
            if (!text) return print_error(name(), text.status());
            auto parsed = stack_lock_from_text(*text, *lock_file_);
            if (!parsed) return print_error(name(), parsed.status());
            lock_ = std::move(parsed).value();
        }
        if (snapshot_) {
            auto snap = load_snapshot(*snapshot_);
            if (!snap) return print_error(name(), snap.status());
            snapshot_read_ = std::move(snap).value();
        }
        return 0;
    }

    int run(const GlobalOptions& global) override {
        if (list_) return list_checks();
        // Importing torch takes seconds: only when a selected check judges it.
        collect_.torch = false;
        for (const char* id : {"stack.torch", "stack.nccl"})
            if (selected(id, selection_)) collect_.torch = true;
        const std::optional<StackLock>& lock = lock_;
        if (lock && lock->versions.count("torch") && selected("stack.drift", selection_))
            collect_.torch = true;
        DoctorReport report;
        Result<Snapshot> snap =
            snapshot_read_ ? Result<Snapshot>(*snapshot_read_) : collect_snapshot(collect_);
        if (!snap) return print_error(name(), snap.status());
        report.source = snapshot_ ? fmt::format("snapshot {} (root {})", *snapshot_, snap->root)
                                  : (snap->root == "/" ? std::string("live machine")
                                                       : "machine tree " + snap->root);
        report.hostname =
            snap->host.hostname.is_known() ? snap->host.hostname.value() : "unknown host";
        report.collected_at = snap->collected_at;
        report.strict = strict_;
        RuleOptions options;
        if (expect_gpus_ >= 0) options.expect_gpus = expect_gpus_;
        if (lock) {
            options.lock = &*lock;
            if (!snapshot_) options.profile_files = read_profile_files(*lock, collect_.root);
        }
        report.findings = judge(*snap, options, selection_);
        if (report.findings.empty())
            return print_error(name(),
                               {Errc::kInvalidInput, "--only and --skip leave no check to run"});

        const std::string format = json_ ? "json" : format_;
        std::string text;
        if (format == "json")
            text = json_result(render_json(report), name(),
                               doctor_exit_code(report.findings, report.strict));
        else if (format == "md")
            text = render_markdown(report, verbose_);
        else
            text = render_table(report, verbose_,
                                !output_.output && color_wanted(stdout, global.no_color));
        return emit_result(name(), output_, text, doctor_exit_code(report.findings, strict_));
    }

private:
    int list_checks() {
        std::string text;
        if (json_ || format_ == "json") {
            nlohmann::json checks = nlohmann::json::array();
            for (const auto& r : all_rules())
                checks.push_back({{"id", r.id}, {"title", r.title}, {"refs", r.refs}});
            text = json_result({{"schema", "trainrig.doctor.checks"},
                                {"schema_version", 1},
                                {"checks", std::move(checks)}},
                               "doctor --list", 0);
        } else {
            text = checks_footer();
            if (verbose_)
                for (const auto& r : all_rules())
                    text += fmt::format("\n{}\n  {}\n", r.id, join(r.refs, "\n  "));
        }
        return emit_result(name(), output_, text, 0);
    }

    CollectOptions collect_;
    OutputOptions output_;
    std::optional<std::string> snapshot_;
    std::string format_ = "table";
    bool json_ = false;
    bool verbose_ = false;
    bool strict_ = false;
    bool list_ = false;
    int expect_gpus_ = -1;
    std::optional<std::string> lock_file_;
    Selection selection_;
    std::optional<StackLock> lock_;          // --lock, read by check()
    std::optional<Snapshot> snapshot_read_;  // --snapshot, read by check()
};

}  // namespace

std::unique_ptr<Command> make_doctor_command() { return std::make_unique<DoctorCommand>(); }

}  // namespace trainrig

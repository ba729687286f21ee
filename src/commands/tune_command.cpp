// `trainrig tune show|diff`: the tuning profile this machine should have (sysctl, limits, NCCL
// environment, CPU governor, NUMA binding), each setting with its reason and source, and what
// would change. Computed from the same facts `doctor` reads; reads only, needs no root.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <map>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/user_file.h"
#include "probe/collect.h"
#include "stack/stack_lock.h"
#include "tune/apply.h"
#include "tune/render_tune.h"

namespace trainrig {

namespace {

class TuneCommand : public Command {
public:
    const char* name() const override { return "tune"; }
    const char* summary() const override {
        return "Show, diff, apply and roll back this machine's tuning profile (sysctl, limits, "
               "NCCL, CPU, NUMA)";
    }
    void declare(CLI::App& app) override {
        show_ = app.add_subcommand("show",
                                   "Every setting of the profile, its value now, reason "
                                   "and source");
        diff_ = app.add_subcommand("diff",
                                   "The files tune manages as a unified diff, then the "
                                   "live values that would change");
        apply_ = app.add_subcommand("apply",
                                    "Back up, then write the profile's files and live "
                                    "values (root; --root for a machine tree)");
        rollback_ = app.add_subcommand("rollback",
                                       "Restore the state before the latest apply "
                                       "(or backup ID): files byte for byte, live values");
        status_ = app.add_subcommand("status",
                                     "Applied profiles, newest first, and what drifted "
                                     "since");
        lock_ = app.add_subcommand("lock",
                                   "Record the versions and tuning files this machine "
                                   "trains with, for `trainrig doctor --lock`");
        declare_root_options(*lock_, collect_);
        declare_output_options(*lock_, output_);
        app.require_subcommand(1);
        apply_->add_flag("--dry-run", dry_run_,
                         "Show what would be changed and backed up; change "
                         "nothing");
        apply_->add_flag("-y,--yes", yes_,
                         "Apply without asking (scripts; without it, apply shows the changes "
                         "and asks on a terminal, and refuses anywhere else)");
        rollback_->add_option("id", backup_id_, "Backup to restore (default: the latest applied)");
        rollback_->add_flag("--force", force_,
                            "Restore files edited since apply too (the edits are kept in the "
                            "backup)");
        for (auto* sub : {rollback_, status_}) {
            declare_root_option(*sub, collect_.root);
            declare_output_options(*sub, output_);
        }
        for (auto* sub : {show_, diff_, apply_}) {
            declare_root_options(*sub, collect_);
            declare_env_file_option(*sub, collect_);
            declare_output_options(*sub, output_);
            sub->add_option("--only", only_,
                            "Only these profiles (sysctl, limits, nccl, cpu, numa)")
                ->delimiter(',')
                ->type_name("LIST");
            sub->add_option("--overrides", overrides_,
                            "TOML file with your own values "
                            "(docs/tuning.md)")
                ->check(existing_input())
                ->type_name("FILE");
            sub->add_flag("--multi-node", multi_node_,
                          "The job spans machines: name NCCL's socket interface when there is no "
                          "InfiniBand");
        }
        declare_json_option(*show_, json_, "trainrig.tune");
        declare_json_option(*diff_, json_, "trainrig.tune");
        declare_json_option(*apply_, json_, "trainrig.tune.apply");
        declare_json_option(*rollback_, json_, "trainrig.tune.rollback");
        declare_json_option(*status_, json_, "trainrig.tune.status");
        declare_json_option(
            *lock_, json_,
            "trainrig.stack.lock, always JSON: the flag is accepted for scripts that "
            "pass it to every command");
        declare_verbose_option(*show_, verbose_, "the doctor check that judges each setting");
        declare_verbose_option(*diff_, verbose_, "why each live value changes");
        declare_verbose_option(*apply_, verbose_, "the files' changes as a unified diff");
        declare_verbose_option(*rollback_, verbose_,
                               "every restored item, CPU policies one by one");
        declare_verbose_option(*status_, verbose_, "what the latest applied profile set");
        declare_verbose_option(*lock_, verbose_, "the recorded versions, on stderr");
        declare_help_footer(*show_, {"trainrig tune show -v", "trainrig tune show --json",
                                     "trainrig tune show --root tests/fixtures/machines/"
                                     "article-box"});
        declare_help_footer(*diff_,
                            {"trainrig tune diff --only sysctl,nccl --multi-node",
                             "trainrig tune diff --overrides site.toml   # docs/tuning.md"});
        declare_help_footer(*apply_, {"trainrig tune apply --dry-run -v",
                                      "sudo trainrig tune apply --only sysctl,limits   # shows "
                                      "the changes and asks",
                                      "sudo trainrig tune apply --yes   # from a script"});
        declare_help_footer(*rollback_, {"sudo trainrig tune rollback",
                                         "sudo trainrig tune rollback 20261130T063129Z -v"});
        declare_help_footer(*status_,
                            {"trainrig tune status -v   # exit 1 when something drifted"});
        declare_help_footer(*lock_, {"trainrig tune lock -o stack.lock   # later: trainrig "
                                     "doctor --lock stack.lock"});
    }

    int check(const GlobalOptions& global) override {
        if (rollback_->parsed() || status_->parsed() || lock_->parsed()) return 0;
        const char* command = global.command.c_str();
        if (auto s = tune::check_profile_names(only_); !s.ok()) return print_error(command, s);
        request_.only = {only_.begin(), only_.end()};
        request_.multi_node = multi_node_;
        if (overrides_) {
            auto text = read_user_file(*overrides_, "--overrides", 1u << 20);
            if (!text) return print_error(command, text.status());
            auto parsed = tune::parse_overrides(*text, *overrides_);
            if (!parsed) return print_error(command, parsed.status());
            request_.overrides = *parsed;
            request_.overrides_file = *overrides_;
        }
        return 0;
    }

    int run(const GlobalOptions& global) override {
        command_ = global.command;
        const RootFs rootfs(collect_.root);
        if (rollback_->parsed() || status_->parsed()) return run_restore(rootfs);
        if (lock_->parsed()) return run_lock(rootfs);
        tune::TuneRequest& request = request_;
        collect_.torch = request.wants("nccl");  // renames depend on the PyTorch version
        auto snap = collect_snapshot(collect_);
        if (!snap) return print_error(command_.c_str(), snap.status());
        const auto live =
            tune::read_live_state(rootfs, tune::sysctl_keys_of_interest(request.overrides));
        if (!live.unreadable.empty())
            return print_error(command_.c_str(), {Errc::kIo, live.unreadable.front(),
                                                  "tune compares and replaces whole files; fix its "
                                                  "permissions or remove it"});
        auto profile = tune::build_profile(*snap, live, request);
        if (!profile) return print_error(command_.c_str(), profile.status());
        if (apply_->parsed()) return run_apply(rootfs, *profile);
        std::string text;
        if (json_)
            text = json_result(tune::profile_to_json(*profile),
                               diff_->parsed() ? "tune diff" : "tune show", 0);
        else
            text = diff_->parsed() ? tune::render_diff(*profile, verbose_)
                                   : tune::render_show(*profile, verbose_);
        return emit_result(command_.c_str(), output_, text, 0);
    }

private:
    int run_apply(const RootFs& rootfs, const tune::Profile& profile) {
        const auto changes = tune::plan_changes(profile, rootfs);
        if (changes.empty())
            return emit_apply(changes, "", "Nothing to change: this machine has the profile.\n");
        std::string text = describe(changes);
        if (verbose_) text += "\n" + tune::render_diff(profile);
        if (dry_run_)
            return emit_apply(
                changes, "",
                "tune apply would make these changes (--dry-run: none made):\n" + text);
        if (rootfs.is_live() && ::geteuid() != 0)
            return print_error(command_.c_str(),
                               {Errc::kPermission,
                                "tune apply changes /etc, /proc/sys and /sys: run it as "
                                "root",
                                "`trainrig tune apply --dry-run` shows the changes"});
        if (!yes_) {
            if (::isatty(STDIN_FILENO) != 1)
                return print_error(command_.c_str(),
                                   {Errc::kInvalidInput,
                                    fmt::format("tune apply would make {} change(s) and there "
                                                "is no terminal to ask on",
                                                changes.size()),
                                    "pass --yes to apply them from a script (`trainrig tune "
                                    "apply --dry-run` shows them)"});
            if (!confirmed(profile, text, changes.size())) {
                std::fputs("Nothing changed.\n", stderr);
                return 1;
            }
        }
        auto report = tune::apply_changes(changes, rootfs, tune::backup_id_now());
        if (!report) return print_error(command_.c_str(), report.status());
        const std::string& id = report->backup_id;
        return emit_apply(changes, id,
                          fmt::format("Applied {} change(s); backup {}/{} (`trainrig tune "
                                      "rollback` restores it):\n{}",
                                      changes.size(), tune::kBackupDir, id, text));
    }

    int emit_apply(const std::vector<tune::Change>& changes, const std::string& backup_id,
                   const std::string& text) {
        if (!json_) return emit(text);
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& c : changes)
            rows.push_back({{"kind", c.kind == tune::Change::Kind::kFile ? "file" : "live"},
                            {"path", c.path},
                            {"label", c.label},
                            {"before", c.before ? nlohmann::json(*c.before) : nlohmann::json()},
                            {"after", c.after}});
        return emit(json_result(
            {{"schema", "trainrig.tune.apply"},
             {"schema_version", 1},
             {"dry_run", dry_run_},
             {"backup_id", backup_id.empty() ? nlohmann::json() : nlohmann::json(backup_id)},
             {"changes", std::move(rows)}},
            "tune apply", 0));
    }

    // On a terminal: the changes and the files' diff, then "Apply these N change(s)? [y/N]";
    // only y or yes goes on.
    static bool confirmed(const tune::Profile& profile, const std::string& changes, size_t n) {
        std::fprintf(stderr,
                     "tune apply would make these changes:\n%s\n%s\nApply these %zu "
                     "change(s)? [y/N] ",
                     changes.c_str(), tune::render_diff(profile).c_str(), n);
        std::fflush(stderr);
        std::string answer;
        for (int c = std::getchar(); c != EOF && c != '\n'; c = std::getchar())
            answer += static_cast<char>(c);
        while (!answer.empty() && (answer.back() == ' ' || answer.back() == '\r'))
            answer.pop_back();
        return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" ||
               answer == "Yes";
    }

    // One line per change; the per-CPU-policy governor writes as one line.
    static std::string describe(const std::vector<tune::Change>& changes) {
        std::string text;
        std::map<std::string, int> governors;  // "from -> to" -> policies
        for (const auto& c : changes) {
            if (c.kind == tune::Change::Kind::kFile)
                text += fmt::format("  {} {}\n", c.before ? "replace" : "create", c.path);
            else if (c.label.ends_with(" scaling_governor"))
                ++governors[fmt::format("{} -> {}", c.before.value_or("?"), c.after)];
            else
                text += fmt::format("  {}: {} -> {}\n", c.label, c.before.value_or("?"), c.after);
        }
        for (const auto& [change, n] : governors)
            text += fmt::format("  scaling_governor on {} CPU policies: {}\n", n, change);
        return text;
    }

    int run_lock(const RootFs& rootfs) {
        auto snap = collect_snapshot(collect_);
        if (!snap) return print_error(command_.c_str(), snap.status());
        StackLock lock;
        lock.created = snap->collected_at;
        lock.host = snap->host.hostname.is_known() ? snap->host.hostname.value() : "";
        lock.versions = stack_versions(*snap);
        for (const char* path : {tune::kSysctlFile, tune::kLimitsFile, tune::kNcclFile}) {
            auto text = rootfs.read(path);
            if (!text && text.status().code() != Errc::kNotFound)
                return print_error(command_.c_str(), text.status());
            lock.profile[path] = text.ok() ? std::optional<std::string>(*text) : std::nullopt;
        }
        if (verbose_)
            for (const auto& [what, version] : lock.versions)
                std::fprintf(stderr, "  %-20s %s\n", what.c_str(), version.c_str());
        // The lock file is JSON either way; it carries the envelope too (docs/cli.md).
        return emit(json_result(stack_lock_to_json(lock), "tune lock", 0));
    }

    int run_restore(const RootFs& rootfs) {
        if (rollback_->parsed()) {
            if (rootfs.is_live() && ::geteuid() != 0)
                return print_error(command_.c_str(),
                                   {Errc::kPermission,
                                    "tune rollback changes /etc, /proc/sys and /sys: run "
                                    "it as root"});
            auto r = tune::rollback(rootfs, backup_id_, force_);
            if (!r) return print_error(command_.c_str(), r.status());
            if (json_)
                return emit(json_result(
                    {{"schema", "trainrig.tune.rollback"},
                     {"schema_version", 1},
                     {"backup_id",
                      r->nothing.empty() ? nlohmann::json(r->backup_id) : nlohmann::json()},
                     {"restored", r->restored},
                     {"nothing",
                      r->nothing.empty() ? nlohmann::json() : nlohmann::json(r->nothing)}},
                    "tune rollback", 0));
            if (!r->nothing.empty()) return emit("Nothing to roll back: " + r->nothing + ".\n");
            std::string text = fmt::format("Restored the state before {} ({} item(s)):\n",
                                           r->backup_id, r->restored.size());
            int governors = 0;
            for (const auto& label : r->restored) {
                if (label.ends_with(" scaling_governor") && !verbose_)
                    ++governors;
                else
                    text += "  " + label + "\n";
            }
            if (governors)
                text += fmt::format("  scaling_governor on {} CPU policies\n", governors);
            return emit(text);
        }
        auto r = tune::tune_status(rootfs);
        if (!r) return print_error(command_.c_str(), r.status());
        const int code = r->drift.empty() && !r->interrupted ? 0 : 1;
        if (json_)
            return emit(json_result({{"schema", "trainrig.tune.status"},
                                     {"schema_version", 1},
                                     {"backups", r->lines},
                                     {"applied", r->applied},
                                     {"drift", r->drift},
                                     {"interrupted", r->interrupted}},
                                    "tune status", code),
                        code);
        if (r->lines.empty()) return emit("No profile has been applied here.\n");
        std::string text = "Backups (newest first):\n";
        for (const auto& l : r->lines) text += "  " + l + "\n";
        if (verbose_ && !r->applied.empty()) {
            text += "Set by the latest apply:\n";
            for (const auto& a : r->applied) text += "  " + a + "\n";
        }
        if (!r->drift.empty()) {
            text += "Drift since the latest apply:\n";
            for (const auto& d : r->drift) text += "  " + d + "\n";
        }
        return emit(text, code);
    }

    int emit(const std::string& text, int code = 0) {
        return emit_result(command_.c_str(), output_, text, code);
    }

    CLI::App* show_ = nullptr;
    CLI::App* diff_ = nullptr;
    CLI::App* apply_ = nullptr;
    CLI::App* rollback_ = nullptr;
    CLI::App* status_ = nullptr;
    CLI::App* lock_ = nullptr;
    bool dry_run_ = false, force_ = false, yes_ = false;
    std::optional<std::string> backup_id_;
    CollectOptions collect_;
    OutputOptions output_;
    std::vector<std::string> only_;
    tune::TuneRequest request_;  // --only and --overrides, checked by check()
    std::string command_;        // "tune show": the words errors name
    std::optional<std::string> overrides_;
    bool multi_node_ = false, json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_tune_command() { return std::make_unique<TuneCommand>(); }

}  // namespace trainrig

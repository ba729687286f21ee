// `trainrig maintenance start|end|status`: an operator's maintenance window
// (core/maintenance_window.h): while it holds, watch announces no new alert and npd and
// slurm healthcheck drain nothing; it ends by itself.
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/json_result.h"
#include "core/maintenance_window.h"
#include "core/quantity.h"
#include "core/text.h"
#include "core/utc_time.h"

namespace trainrig {

namespace {

// Who opened the window: the user behind sudo when there is one.
std::string user_name() {
    if (const char* sudo = std::getenv("SUDO_USER"); sudo != nullptr && *sudo != '\0') return sudo;
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr) return pw->pw_name;
    return std::to_string(::geteuid());
}

class MaintenanceCommand : public Command {
public:
    const char* name() const override { return "maintenance"; }
    const char* summary() const override {
        return "Open or end a maintenance window: watch, npd and slurm healthcheck raise nothing "
               "new and drain nothing until it ends by itself";
    }
    void declare(CLI::App& app) override {
        app.require_subcommand(1, 1);
        start_ = app.add_subcommand("start", "Open a window now, for a time (it ends by itself)");
        start_
            ->add_option("--for", for_,
                         "How long: 30m, 2h, 1d (at most 7d); the window ends by itself then")
            ->required()
            ->type_name("PERIOD");
        start_->add_option("--reason", reason_, "What is being done, for whoever looks")
            ->type_name("TEXT");
        end_ = app.add_subcommand("end", "End the window now");
        status_ = app.add_subcommand("status", "Whether a window holds, and until when");
        for (auto* sub : {start_, end_, status_}) {
            declare_root_option(*sub, root_);
            declare_output_options(*sub, output_);
            declare_verbose_option(*sub, verbose_, "the window's file too");
        }
        declare_json_option(*start_, json_, "trainrig.maintenance.status");
        declare_json_option(*end_, json_, "trainrig.maintenance.status");
        declare_json_option(*status_, json_, "trainrig.maintenance.status");
        declare_help_footer(*start_,
                            {"trainrig maintenance start --for 2h --reason \"driver upgrade\""});
        declare_help_footer(*end_, {"trainrig maintenance end"});
        declare_help_footer(*status_, {"trainrig maintenance status --json"});
        declare_help_footer(app, {"trainrig maintenance start --for 2h --reason \"driver upgrade\"",
                                  "trainrig maintenance status", "trainrig maintenance end"});
    }

    int check(const GlobalOptions& global) override {
        command_ = global.command;
        if (!start_->parsed()) return 0;
        const auto seconds = parse_period(for_);
        if (!seconds || *seconds <= 0 || *seconds > kMaxMaintenanceSeconds)
            return print_error(
                command_.c_str(),
                {Errc::kInvalidInput, fmt::format("--for {} is not a period from 1s to 7d", for_),
                 "a window ends by itself; longer work opens a new one"});
        seconds_ = *seconds;
        return 0;
    }

    int run(const GlobalOptions&) override {
        const std::time_t now = std::time(nullptr);
        if (start_->parsed()) {
            MaintenanceWindow w{now, now + static_cast<std::time_t>(std::ceil(seconds_)), reason_,
                                user_name()};
            if (auto s = start_maintenance(root_, w); !s.ok())
                return print_error(command_.c_str(), s);
        } else if (end_->parsed()) {
            if (auto s = end_maintenance(root_); !s.ok()) return print_error(command_.c_str(), s);
        }
        auto window = active_maintenance(root_, now);
        if (!window) return print_error(command_.c_str(), window.status());
        const std::string file = maintenance_file(root_).string();
        std::string text;
        if (json_) {
            nlohmann::json doc = {{"schema", "trainrig.maintenance.status"},
                                  {"schema_version", 1},
                                  {"active", window->has_value()},
                                  {"file", file}};
            if (*window) {
                doc["started_at"] = utc_iso8601((*window)->started);
                doc["until"] = utc_iso8601((*window)->until);
                doc["seconds_left"] = (*window)->until - now;
                doc["reason"] = (*window)->reason;
                doc["by"] = (*window)->by;
            }
            text = json_result(std::move(doc), command_, 0);
        } else {
            text = *window ? maintenance_line(**window, now) + "\n"
                           : std::string("no maintenance window\n");
            if (verbose_) text += "file: " + file + "\n";
        }
        return emit_result(command_.c_str(), output_, text, 0);
    }

private:
    CLI::App* start_ = nullptr;
    CLI::App* end_ = nullptr;
    CLI::App* status_ = nullptr;
    std::string command_;
    std::filesystem::path root_ = "/";
    std::string for_;
    double seconds_ = 0;
    std::string reason_;
    OutputOptions output_;
    bool json_ = false, verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_maintenance_command() {
    return std::make_unique<MaintenanceCommand>();
}

}  // namespace trainrig

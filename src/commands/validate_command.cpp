// `trainrig validate`: one command that proves a machine ready to train, with a report a person
// can read and a tool can check (docs/report.md).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <ctime>
#include <filesystem>

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "core/utc_time.h"
#include "validate/report_dir.h"
#include "validate/report_html.h"
#include "validate/report_render.h"
#include "validate/validate_run.h"

namespace trainrig {

namespace {

// trainrig-report-HOST-UTCTIME, with -2, -3 ... when runs in the same second would collide.
std::string default_report_dir(const nlohmann::json& report) {
    const std::string base =
        fmt::format("trainrig-report-{}-{}",
                    report["host"].is_string() ? report["host"].get<std::string>() : "unknown",
                    utc_iso8601(std::time(nullptr), true));
    std::string dir = base;
    std::error_code ec;
    for (int n = 2; std::filesystem::exists(std::filesystem::symlink_status(dir, ec)); ++n)
        dir = fmt::format("{}-{}", base, n);
    return dir;
}

class ValidateCommand : public Command {
public:
    const char* name() const override { return "validate"; }
    const char* summary() const override {
        return "Prove this machine ready to train: every check, benchmark and a training run, "
               "one verdict and a report";
    }
    void declare(CLI::App& app) override {
        app.add_option("--level", level_,
                       "quick (an admission check: about a minute), standard (acceptance: about "
                       "15 minutes), long (burn-in: 1-2 hours)")
            ->check(CLI::IsMember({"quick", "standard", "long"}))
            ->default_str("quick");
        app.add_option("--report", report_,
                       "The report directory to write (default trainrig-report-HOST-UTCTIME); "
                       "it must not exist yet")
            ->type_name("DIR");
        app.add_flag("--no-report", no_report_, "Write no report directory; print the verdict");
        declare_machine_options(app, options_.collect);
        declare_gpu_selection(app, options_.gpus);
        app.add_option("--skip", options_.skip,
                       "Leave out stages (doctor, topology, host-bench, gpu-bench, data-path, "
                       "training, watch), doctor checks or areas, or benchmarks")
            ->delimiter(',')
            ->type_name("NAME,...");
        app.add_option("--expect-gpus", options_.expect_gpus,
                       "Number of GPUs this machine should have (as doctor --expect-gpus)")
            ->envname("TRAINRIG_EXPECT_GPUS")
            ->check(CLI::Range(0, 1024))
            ->type_name("N");
        app.add_option("--stage-timeout", options_.stage_timeout,
                       "Stop a measuring stage that runs longer than SECONDS, and kill it if it "
                       "does not stop (a hung driver call); the verdict is then UNKNOWN "
                       "(default: 3 x the stage's budget + 60 s)")
            ->check(CLI::Range(0.1, 86400.0))
            ->type_name("SECONDS");
        app.add_option("--baseline", options_.baseline,
                       "Expect each measurement's median in this earlier report (a directory or "
                       "its report.json: this machine before, or a golden node) instead of the "
                       "hardware's figure; below bench's tolerance of it is a finding")
            ->type_name("REPORT");
        auto* data = app.add_option_group(
            "data path", "the data-path stage (default: the loader on generated tokens)");
        declare_data_path_inputs(*data, options_.tokenizer, options_.inputs, options_.shards);
        declare_output_options(app, output_);
        declare_json_option(app, json_, "trainrig.validate");
        declare_verbose_option(app, verbose_,
                               "every item and stage, and a line on stderr as each stage starts");
        declare_help_footer(
            app, {"trainrig validate                         # quick: verdict and report",
                  "trainrig validate --level standard --data-dir /data",
                  "trainrig validate --json --no-report      # the verdict for a scheduler",
                  "trainrig validate --root /mnt/node07 --report node07"});
    }

    int run(const GlobalOptions& global) override {
        auto level = validate::level_from_name(level_);
        if (!level.ok()) return print_error(name(), level.status());
        options_.level = *level;
        if (auto s = validate::check_skip(options_.skip); !s.ok()) return print_error(name(), s);
        if (options_.tokenizer.empty() != options_.inputs.empty())
            return print_error(name(), {Errc::kInvalidInput,
                                        "--tokenizer and --input go together: the tokenizer "
                                        "benchmark encodes the --input text with --tokenizer"});
        if (no_report_ && report_)
            return print_error(name(), {Errc::kInvalidInput, "--report and --no-report together"});
        options_.progress = verbose_ || ::isatty(STDERR_FILENO) == 1;
        options_.argv = {"trainrig"};
        options_.argv.insert(options_.argv.end(), global.args.begin(), global.args.end());

        auto result = validate::run_validate(options_);
        if (!result.ok()) return print_error(name(), result.status());
        const int code = validate::verdict_exit_code(result->outcome.verdict);
        const std::string doc = json_result(result->report, name(), code);
        std::string dir;
        if (!no_report_) {
            dir = report_ ? *report_ : default_report_dir(result->report);
            std::map<std::string, std::string> files = result->raw;
            files["report.json"] = doc;
            files["report.md"] = validate::render_report_markdown(result->report);
            files["report.html"] = validate::render_report_html(result->report);
            if (auto s = validate::write_report_dir(dir, files); !s.ok())
                return print_error(name(), s);
        }
        const std::string text =
            json_ ? doc : validate::render_report_text(result->report, dir, verbose_);
        return emit_result(name(), output_, text, code);
    }

private:
    validate::ValidateOptions options_;
    std::string level_ = "quick";
    std::optional<std::string> report_;
    bool no_report_ = false;
    OutputOptions output_;
    bool json_ = false;
    bool verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace trainrig

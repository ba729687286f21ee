// `trainrig report DIR`: render a validate report again from its report.json alone;
// `report diff OLD NEW`: what changed between two; `report verify DIR`: is it as written.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "validate/report_compare.h"
#include "validate/report_dir.h"
#include "validate/report_html.h"
#include "validate/report_render.h"
#include "validate/report_trust.h"

namespace trainrig {

namespace {

class ReportCommand : public Command {
public:
    const char* name() const override { return "report"; }
    const char* summary() const override {
        return "Render, compare or check report directories written by `trainrig validate`";
    }
    void declare(CLI::App& app) override {
        app.require_subcommand(0, 1);
        app.add_option("dir", render_dir_, "A report directory, or its report.json")
            ->check(existing_input())
            ->type_name("DIR");
        auto* format = app.add_option_group("format", "What to render (default: the terminal's)");
        format->add_flag("--html", html_, "report.html: the page for a browser");
        format->add_flag("--md", md_, "report.md: for a ticket or a pull request");
        declare_json_option(*format, render_json_, "trainrig.validate: report.json as it is");
        // doctor's option too: --html, --md and --json are its shorthands.
        format->add_option("--format", format_, "Output format (table, md, html or json)")
            ->check(CLI::IsMember({"table", "md", "html", "json"}));
        format->require_option(0, 1);
        declare_output_options(app, render_output_);
        declare_verbose_option(app, render_verbose_, "every item, not only the first ten");

        diff_ = app.add_subcommand(
            "diff",
            "What changed from OLD to NEW: the verdict, items that appeared or were resolved, "
            "measurements that moved more than bench's tolerance; exit 1 when anything is worse");
        diff_->add_option("old", old_, "The earlier report (directory or report.json)")
            ->required()
            ->check(existing_input())
            ->type_name("OLD");
        diff_->add_option("new", new_, "The later report")
            ->required()
            ->check(existing_input())
            ->type_name("NEW");
        declare_ratio_options(*diff_);
        declare_output_options(*diff_, diff_output_);
        declare_json_option(*diff_, diff_json_, "trainrig.report.diff");
        declare_verbose_option(*diff_, diff_verbose_, "the measurements that did not move too");
        declare_help_footer(*diff_, {"trainrig report diff node07-november node07",
                                     "trainrig report diff --json golden/report.json node07"});

        verify_ = app.add_subcommand(
            "verify",
            "Check every file of a report against its SHA256SUMS: changed, missing "
            "and unlisted files");
        verify_->add_option("dir", verify_dir_, "The report directory")
            ->required()
            ->check(existing_input())
            ->type_name("DIR");
        declare_output_options(*verify_, verify_output_);
        declare_json_option(*verify_, verify_json_, "trainrig.report.verify");
        declare_verbose_option(*verify_, verify_verbose_,
                               "every file checked, not only the ones that differ");
        declare_help_footer(*verify_,
                            {"trainrig report verify trainrig-report-node07-20261202T170441Z",
                             "trainrig report verify --json node07"});
        declare_help_footer(
            app, {"trainrig report node07             # the verdict and items",
                  "trainrig report node07 --html -o node07.html",
                  "trainrig report diff node07-november node07", "trainrig report verify node07"});
    }

    int run(const GlobalOptions&) override {
        if (diff_->parsed()) return run_diff();
        if (verify_->parsed()) return run_verify();
        if (render_dir_.empty())
            return print_error(name(), {Errc::kInvalidInput,
                                        "name a report directory (`trainrig report DIR`), or "
                                        "`report diff OLD NEW`, `report verify DIR`"});
        return run_render();
    }

private:
    void declare_ratio_options(CLI::App& app) {
        app.add_option("--pass-ratio", tolerance_.pass,
                       "A measurement at or above this fraction of the old one has not moved "
                       "(as bench run)")
            ->check(CLI::Range(0.0, 1.0))
            ->default_str("0.9");
        app.add_option("--warn-ratio", tolerance_.warn,
                       "Below this fraction of the old one it failed, between the two it is "
                       "a warning")
            ->check(CLI::Range(0.0, 1.0))
            ->default_str("0.75");
    }

    // A report edited since validate wrote it is still shown, but never silently as validate's.
    static void warn_if_changed(const char* command, const std::string& path) {
        if (const std::string changed = validate::report_changes(path); !changed.empty())
            std::fprintf(stderr,
                         "trainrig %s: %s is not as validate wrote it: %s; `trainrig "
                         "report verify %s` lists every file.\n",
                         command, path.c_str(), changed.c_str(), path.c_str());
    }

    int run_render() {
        auto report = validate::load_report(render_dir_);
        if (!report.ok()) return print_error(name(), report.status());
        warn_if_changed(name(), render_dir_);
        std::string text;
        if (html_ || format_ == "html")
            text = validate::render_report_html(*report);
        else if (md_ || format_ == "md")
            text = validate::render_report_markdown(*report);
        else if (render_json_ || format_ == "json")
            text = report->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        else
            text = validate::render_report_text(*report, render_dir_, render_verbose_);
        return emit_result(name(), render_output_, text, 0);
    }

    int run_diff() {
        if (auto s = bench::validate_thresholds(tolerance_); !s.ok())
            return print_error("report diff", s);
        auto old_report = validate::load_report(old_);
        if (!old_report.ok()) return print_error("report diff", old_report.status());
        auto new_report = validate::load_report(new_);
        if (!new_report.ok()) return print_error("report diff", new_report.status());
        warn_if_changed("report diff", old_);
        warn_if_changed("report diff", new_);
        const auto d = validate::diff_reports(*old_report, *new_report, tolerance_);
        const int code = d.worse() ? 1 : 0;
        auto doc = validate::diff_json(d);
        doc["old"] = old_;
        doc["new"] = new_;
        const std::string text = diff_json_ ? json_result(doc, "report diff", code)
                                            : validate::render_diff_text(d, diff_verbose_);
        return emit_result("report diff", diff_output_, text, code);
    }

    int run_verify() {
        auto r = validate::verify_report_dir(verify_dir_);
        if (!r.ok()) return print_error("report verify", r.status());
        const int code = r->intact() ? 0 : 1;
        std::string text;
        if (verify_json_) {
            text = json_result({{"schema", "trainrig.report.verify"},
                                {"schema_version", 1},
                                {"dir", verify_dir_},
                                {"intact", r->intact()},
                                {"ok", r->ok},
                                {"changed", r->changed},
                                {"missing", r->missing},
                                {"unlisted", r->unlisted}},
                               "report verify", code);
        } else {
            for (const auto& [what, files] :
                 {std::pair{"changed", &r->changed}, std::pair{"missing", &r->missing},
                  std::pair{"not in SHA256SUMS", &r->unlisted}})
                for (const auto& f : *files) text += fmt::format("{}: {}\n", what, f);
            if (verify_verbose_)
                for (const auto& f : r->ok) text += fmt::format("ok: {}\n", f);
            text += r->intact() ? fmt::format("{}: intact ({} files)\n", verify_dir_, r->ok.size())
                                : fmt::format("{}: NOT as written\n", verify_dir_);
        }
        return emit_result("report verify", verify_output_, text, code);
    }

    std::string render_dir_;
    bool html_ = false, md_ = false, render_json_ = false, render_verbose_ = false;
    std::string format_ = "table";
    OutputOptions render_output_;

    CLI::App* diff_ = nullptr;
    std::string old_, new_;
    bench::Thresholds tolerance_;
    OutputOptions diff_output_;
    bool diff_json_ = false, diff_verbose_ = false;

    CLI::App* verify_ = nullptr;
    std::string verify_dir_;
    OutputOptions verify_output_;
    bool verify_json_ = false, verify_verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace trainrig

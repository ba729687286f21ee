// `trainrig report verify DIR`: is a report directory as validate wrote it (SHA256SUMS)?
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "validate/report_dir.h"

namespace trainrig {

namespace {

class ReportCommand : public Command {
public:
    const char* name() const override { return "report"; }
    const char* summary() const override {
        return "Check a report directory written by `trainrig validate`";
    }
    void declare(CLI::App& app) override {
        verify_ = app.add_subcommand(
            "verify",
            "Check every file of a report against its SHA256SUMS: changed, missing "
            "and unlisted files");
        app.require_subcommand(1);
        verify_->add_option("dir", dir_, "The report directory")->required()->type_name("DIR");
        declare_output_options(*verify_, output_);
        declare_json_option(*verify_, json_, "trainrig.report.verify");
        declare_verbose_option(*verify_, verbose_,
                               "every file checked, not only the ones that differ");
        declare_help_footer(*verify_,
                            {"trainrig report verify trainrig-report-node07-20261202T170441Z",
                             "trainrig report verify --json node07"});
    }

    int run(const GlobalOptions&) override {
        auto r = validate::verify_report_dir(dir_);
        if (!r.ok()) return print_error("report verify", r.status());
        const int code = r->intact() ? 0 : 1;
        std::string text;
        if (json_) {
            text = json_result({{"schema", "trainrig.report.verify"},
                                {"schema_version", 1},
                                {"dir", dir_},
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
            if (verbose_)
                for (const auto& f : r->ok) text += fmt::format("ok: {}\n", f);
            text += r->intact() ? fmt::format("{}: intact ({} files)\n", dir_, r->ok.size())
                                : fmt::format("{}: NOT as written\n", dir_);
        }
        return emit_result("report verify", output_, text, code);
    }

private:
    CLI::App* verify_ = nullptr;
    std::string dir_;
    OutputOptions output_;
    bool json_ = false;
    bool verbose_ = false;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace trainrig

#include "commands/health_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/shared_options.h"
#include "core/text.h"

namespace trainrig {

void declare_health_options(CLI::App& app, health::HealthOptions& options, double& budget_s) {
    declare_root_options(app, options.collect);
    declare_expect_gpus(app, options.expect_gpus);
    app.add_option("--only", options.selection.only,
                   fmt::format("Run only these doctor checks (default: {})",
                               join(health::health_check_ids(), ",")))
        ->delimiter(',')
        ->type_name("ID,...");
    app.add_option("--skip", options.selection.skip, "Leave out these doctor checks")
        ->delimiter(',')
        ->type_name("ID,...");
    options.report = kDefaultReportsDir;
    app.add_option("--report", options.report,
                   "The latest `trainrig validate` report: a report directory, its report.json, "
                   "or a folder of report directories (the newest is read); its failed "
                   "measurements count as problems until a newer report passes")
        ->envname("TRAINRIG_REPORTS")
        ->default_str(kDefaultReportsDir)
        ->check(existing_input())  // a path given must exist; only the default may be absent
        ->type_name("PATH");
    app.add_option_function<double>(
           "--max-report-age", [&options](double days) { options.max_report_age = days * 86400.0; },
           "A report older than this is not used (default 7)")
        ->check(CLI::Range(0.0, 3650.0))
        ->type_name("DAYS");
    budget_s = 20;
    app.add_option("--budget", budget_s,
                   "Stop and exit 2, changing nothing, after this long (default 20; Slurm kills "
                   "a health check at 60 s)")
        ->check(CLI::Range(1.0, 3600.0))
        ->type_name("SECONDS");
}

Status check_health_selection(const health::HealthOptions& options) {
    for (const auto* list : {&options.selection.only, &options.selection.skip})
        for (const auto& id : *list)
            if (!find_rule(id))
                return {Errc::kInvalidInput,
                        fmt::format("unknown check id '{}' in {}", id,
                                    list == &options.selection.only ? "--only" : "--skip"),
                        "`trainrig doctor --list` shows the ids"};
    return ok_status();
}

}  // namespace trainrig

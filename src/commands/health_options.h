// The options of the scheduler health checks (`trainrig slurm healthcheck`, `trainrig npd`),
// declared once so that both judge a node from the same inputs.
#pragma once

#include "health/node_health.h"

namespace CLI {
class App;
}

namespace trainrig {

// Where validate reports are kept for the health checks when --report is not given.
inline constexpr const char* kDefaultReportsDir = "/var/lib/trainrig/reports";

// --root, --timeout, --expect-gpus, --only, --skip, --report, --max-report-age, --budget.
void declare_health_options(CLI::App& app, health::HealthOptions& options, double& budget_s);
// An error naming an --only/--skip value that is no doctor check.
Status check_health_selection(const health::HealthOptions& options);

}  // namespace trainrig

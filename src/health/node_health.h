// A node's health as a scheduler asks for it (docs/fleet.md, "Health checks"): a fast subset of
// doctor's checks, the ones whose failure means a job on this node fails or runs degraded by the
// state of its hardware or driver, plus the failed measurements of the latest validate report.
// `trainrig slurm healthcheck` drains on it and `trainrig npd` reports it to Kubernetes: one
// judgement, two schedulers.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/maintenance_window.h"
#include "doctor/report.h"
#include "probe/collect.h"

namespace trainrig::health {

// The doctor checks a node is drained for. Tuning checks (kernel.*, cpu.governor, mem.shm,
// nccl.env, storage.*, the stack's versions) make a node slower or a job misconfigured, not a
// node broken: doctor and validate report them, and a scheduler that drained for them would take
// a fleet down over a sysctl.
const std::vector<std::string>& health_check_ids();

enum class Health { kHealthy, kUnhealthy, kUnknown };
const char* health_name(Health h);  // "healthy", "unhealthy", "unknown"
int health_exit_code(Health h);     // 0, 1, 2: node-problem-detector's plugin protocol too

struct Problem {
    std::string id;      // "gpu.pcie-link", "bench.gemm.bf16"
    std::string detail;  // one line
};

struct HealthOptions {
    CollectOptions collect;  // --root, --timeout
    Selection selection;     // --only/--skip narrow health_check_ids()
    int expect_gpus = -1;    // --expect-gpus; -1: not given
    std::string report;      // --report: a validate report, or a folder of them; empty: none
    double max_report_age = 7 * 86400.0;  // older reports are not used (seconds)
    std::time_t now = 0;                  // 0: the clock
};

struct HealthResult {
    Health health = Health::kUnknown;
    std::string host;
    std::vector<Problem> failures;    // failed checks, then the report's failed measurements
    std::vector<Problem> unknowns;    // checks that could not run
    std::vector<std::string> notes;   // which report was used, or why none
    size_t checks = 0;                // doctor checks run
    std::vector<std::string> judged;  // their ids
    size_t not_applicable = 0;        // of those, skipped: nothing here for them to judge
    // An operator's maintenance window in force (core/maintenance_window.h): the node is judged
    // and its problems said, but it reports healthy to the scheduler and nothing is drained.
    std::optional<MaintenanceWindow> maintenance;
    std::time_t judged_at = 0;
};

// Fails only on bad input (an unreadable --root); anything the node does not let us read is a
// problem in the result.
Result<HealthResult> check_health(const HealthOptions& options);

// What a scheduler is told: health_exit_code of its health, but 0 in a maintenance window (a
// Slurm Prolog that exits non-zero drains the node).
int scheduler_exit_code(const HealthResult& r);

// The result as JSON: health, host, checks, failures, unknowns, notes (docs/formats.md).
nlohmann::json health_json(const HealthResult& r);

// For -v: "  failed: ...", "  could not judge: ...", "  report: ..." lines, one per problem.
std::string render_problems(const HealthResult& r);

// "2 checks passed, 16 not applicable" ("run" unless healthy): the count npd's line and slurm
// healthcheck's status line both give, so the two commands never count one machine differently.
std::string checks_text(const HealthResult& r);

// "gpu.pcie-link GPU 3 at x8 (x16 expected)": id first, cut to max_chars with "...", on one line.
std::string problem_line(const Problem& p, size_t max_chars);

}  // namespace trainrig::health

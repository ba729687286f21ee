// What validate's stages share as they run (stages/stage.h): the options, the machine as the
// doctor stage read it, the measurements so far, the items found, the report being built, and
// whether a stage hung or the run was interrupted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/benchmark.h"
#include "doctor/finding.h"
#include "measure/baseline.h"
#include "measure/bench_document.h"
#include "snapshot/snapshot.h"
#include "validate/report_builder.h"
#include "validate/validate_options.h"
#include "validate/verdict.h"

namespace trainrig::validate {

// The reasons several stages give for not running.
inline constexpr const char* kLiveOnly =
    "--root judges a machine tree: this stage needs the live machine";
inline constexpr const char* kNoGpu = "no NVIDIA GPU on this machine";
inline constexpr const char* kSkippedByUser = "skipped with --skip";
inline constexpr const char* kInterruptedBefore = "interrupted before it started";

struct RunContext {
    explicit RunContext(const ValidateOptions& o);

    const ValidateOptions& options;
    const bool tree;                   // --root: a machine tree, not this machine
    std::optional<Snapshot> snapshot;  // what the doctor stage read; none when interrupted
    std::vector<Finding> findings;     // and what its rules found
    Scope scope = Scope::kTree;        // set by the doctor stage, refined at the end
    bench::BenchRun run;               // every stage's measurements, for the bench document
    std::vector<Item> items;
    ReportBuilder report;
    std::optional<bench::Baseline> baseline;  // --baseline's medians
    nlohmann::json baseline_about = nullptr;  // and what it was, for the report
    std::string hung;  // a stage killed in a hung call: no later stage runs on this machine

    bool live() const { return !tree && snapshot.has_value(); }
    bool skipped_by_user(const std::string& id) const;
    static bool interrupted();
    // "not run: the <hung> stage hung and was killed".
    std::string after_hang() const;
    // The measuring stages' `bench run` options at this level (sizes, repeats, the backend).
    bench::BenchOptions bench_options() const;
};

// A budget per level: quick, standard, long.
double per_level(RunLevel l, double quick, double standard, double long_);

}  // namespace trainrig::validate

// One stage of `trainrig validate` (docs/report.md, "Stages"): an id (what --skip takes and the
// report names), a title, its share of the level's time, why it does not run on this machine
// (applies), and what it does when it does (run). The stages run in the order of the one list in
// stages/stage_list.h; run_validate (validate_run.h) is the loop over it. A new stage is a file
// of its own here and one line in that list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "validate/stages/run_context.h"
#include "validate/verdict.h"

namespace trainrig::validate {

// Why a stage does not run: its reason in the report, and its state there. kCouldNotRun when a
// required stage was kept from running (the verdict is then UNKNOWN); `by_user` when --skip left
// it out, which never makes it UNKNOWN: its checks' coverage says they were skipped (coverage.h).
struct Skip {
    std::string reason;
    StageState state = StageState::kSkipped;
    bool by_user = false;
};

class Stage {
public:
    virtual ~Stage() = default;

    virtual const char* id() const = 0;
    virtual const char* title() const = 0;
    // Seconds budgeted at `level` on an 8-GPU node (docs/report.md, "Levels").
    virtual double budget_seconds(RunLevel level) const = 0;
    // Whether the verdict needs it: one that could not run makes the verdict UNKNOWN.
    virtual bool required(const RunContext&) const { return false; }
    // A measuring stage runs benchmarks in a child (stage_child.h), on the live machine, after
    // the stages that read the machine; the stages that run beside it start before the first.
    virtual bool measures() const { return false; }
    // The benchmarks it runs at this level, before --skip: the checks it stands for in the
    // report's coverage (coverage.h).
    virtual std::vector<std::string> bench_ids(const RunContext&) const { return {}; }

    // Nothing when it runs here; else why not.
    virtual std::optional<Skip> applies(const RunContext& ctx) const = 0;
    // Runs it: sets the record's state (and reason), adds items and report sections to `ctx`. A
    // failure returned is bad input that stops validate (an unreadable --root); whatever the
    // machine makes go wrong is in the record and the items instead.
    virtual Status run(RunContext& ctx, StageRecord& record) = 0;

    // A stage that runs beside the measuring ones (watch): started before the first of them,
    // concluded by run() at its own place in the list, the last. It keeps its own time and
    // prints no progress line of its own.
    virtual bool beside() const { return false; }
    virtual void start_beside(RunContext&) {}
};

}  // namespace trainrig::validate

// What a validate run covered (docs/report.md, "Coverage"): for each check of the plan
// (coverage_plan.h), whether the class requires it and how it ended: judged (passed, warned,
// failed, measured), not judged (could not judge, could not run), skipped with --skip, or not
// applicable. READY needs every required check judged; judge() (verdict.h) caps the verdict at
// READY WITH WARNINGS and names what was not.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "measure/bench_document.h"
#include "validate/coverage_plan.h"
#include "validate/verdict.h"

namespace trainrig::validate {

enum class CheckOutcome {
    kPassed,
    kWarned,
    kFailed,
    kMeasured,       // ran, with no expectation to judge it against
    kCouldNotJudge,  // ran, but its input could not be read (an error)
    kCouldNotRun,    // did not run: no driver, no kernel log, a stage that hung or stopped
    kSkipped,        // --skip left it out
    kNotApplicable,  // a host-decided check with nothing to judge here
};
const char* check_outcome_name(CheckOutcome o);  // "passed", ..., "could not run", "skipped"

struct CoveredCheck {
    std::string id;
    CheckKind kind = CheckKind::kDoctor;
    bool required = false;
    std::string why;  // why required or not (coverage_plan.h)
    CheckOutcome outcome = CheckOutcome::kCouldNotRun;
    std::string reason;  // why it was not judged, or not applicable

    bool judged() const {
        return outcome == CheckOutcome::kPassed || outcome == CheckOutcome::kWarned ||
               outcome == CheckOutcome::kFailed || outcome == CheckOutcome::kMeasured;
    }
    // "gemm (skipped with --skip)", "kmsg.xid (could not run: the kernel log is not readable)"
    std::string missing_text() const;
};

struct Coverage {
    MachineClass machine;
    std::vector<CoveredCheck> checks;

    size_t required() const;
    size_t judged() const;  // required and judged
    bool complete() const { return judged() == required(); }
    // The required checks not judged, in plan order.
    std::vector<const CoveredCheck*> missing() const;
};

// What a run did, as the stages recorded it.
struct RunRecord {
    std::vector<std::string> skip;                   // --skip: stages, checks, areas, benchmarks
    const std::vector<Finding>* findings = nullptr;  // the doctor stage's; null: not read
    const bench::BenchRun* bench = nullptr;          // the measuring stages'
    const std::vector<StageRecord>* stages = nullptr;
    const std::vector<Item>* items = nullptr;
    std::map<std::string, std::string> bench_stage;  // a benchmark's stage: "gemm" -> "gpu-bench"
};

Coverage cover(const MachineClass& machine, const RunRecord& run);

// docs/report.md, "coverage": the class, the counts, and every check with its outcome.
nlohmann::json coverage_json(const Coverage& c);
// For the verdict line: the required checks not judged, up to `most` named, then a count.
std::string missing_line(const Coverage& c, size_t most = 6);

}  // namespace trainrig::validate

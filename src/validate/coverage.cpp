#include "validate/coverage.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "measure/verdict.h"

namespace trainrig::validate {

namespace {

bool skipped_with_option(const std::vector<std::string>& skip, const std::string& id) {
    // --skip takes a check, an area ("gpu" for every gpu.* rule), a benchmark or a stage.
    return std::any_of(skip.begin(), skip.end(),
                       [&](const std::string& s) { return id == s || id.starts_with(s + "."); });
}

const StageRecord* stage_named(const RunRecord& run, const std::string& name) {
    if (!run.stages) return nullptr;
    for (const auto& s : *run.stages)
        if (s.name == name) return &s;
    return nullptr;
}

// Why a stage's checks did not run, in its record's words.
std::string stage_reason(const StageRecord& s) {
    if (s.state == StageState::kInterrupted) return "interrupted";
    return s.reason.empty() ? std::string("the ") + s.name + " stage did not run" : s.reason;
}

void doctor_outcome(const RunRecord& run, CoveredCheck& c) {
    if (!run.findings) {
        c.reason = "the machine was not read (interrupted)";
        return;
    }
    const auto f = std::find_if(run.findings->begin(), run.findings->end(),
                                [&](const Finding& x) { return x.id == c.id; });
    if (f == run.findings->end()) {
        c.reason = "not run";
        return;
    }
    switch (f->status) {
        case FindingStatus::kPass:
            c.outcome = CheckOutcome::kPassed;
            return;
        case FindingStatus::kWarn:
            c.outcome = CheckOutcome::kWarned;
            return;
        case FindingStatus::kFail:
            c.outcome = CheckOutcome::kFailed;
            return;
        case FindingStatus::kError:
            c.outcome = CheckOutcome::kCouldNotJudge;
            c.reason = f->summary;
            return;
        case FindingStatus::kSkip:
            c.outcome = CheckOutcome::kCouldNotRun;
            c.reason = f->summary;
            return;
    }
}

void bench_outcome(const RunRecord& run, const std::string& stage, CoveredCheck& c) {
    if (run.bench) {
        const bench::BenchRun& b = *run.bench;
        bool any = false, partial = false;
        bench::Verdict worst = bench::Verdict::kInfo;
        auto rank = [](bench::Verdict v) {
            return v == bench::Verdict::kFail   ? 3
                   : v == bench::Verdict::kWarn ? 2
                   : v == bench::Verdict::kPass ? 1
                                                : 0;
        };
        for (const auto& r : b.records) {
            if (r.bench != c.id) continue;
            any = true;
            partial = partial || r.partial;
            const auto v = bench::judge(r, b.thresholds);
            if (rank(v) > rank(worst)) worst = v;
        }
        if (any && partial) {
            c.outcome = CheckOutcome::kCouldNotJudge;
            c.reason = "stopped before it finished: its measurements are partial";
            return;
        }
        if (any) {
            c.outcome = worst == bench::Verdict::kFail   ? CheckOutcome::kFailed
                        : worst == bench::Verdict::kWarn ? CheckOutcome::kWarned
                        : worst == bench::Verdict::kPass ? CheckOutcome::kPassed
                                                         : CheckOutcome::kMeasured;
            return;
        }
        for (const auto& e : b.errors)
            if (e.bench == c.id) {
                c.reason = e.text;
                return;
            }
        for (const auto& k : b.skipped)
            if (k.bench == c.id) {
                c.reason = k.text;
                return;
            }
    }
    const StageRecord* s = stage_named(run, stage);
    c.reason = s && s->state != StageState::kRan ? stage_reason(*s) : "not run";
}

void stage_outcome(const RunRecord& run, CoveredCheck& c) {
    const StageRecord* s = stage_named(run, c.id);
    if (!s || s->state != StageState::kRan) {
        c.reason = s ? stage_reason(*s) : "not run";
        return;
    }
    Level worst = Level::kWarn;
    bool any = false;
    auto rank = [](Level l) { return l == Level::kFail ? 2 : l == Level::kUnknown ? 1 : 0; };
    if (run.items)
        for (const auto& i : *run.items)
            if (i.stage == c.id) {
                if (!any || rank(i.level) > rank(worst)) worst = i.level;
                any = true;
            }
    c.outcome = !any                       ? CheckOutcome::kPassed
                : worst == Level::kFail    ? CheckOutcome::kFailed
                : worst == Level::kUnknown ? CheckOutcome::kCouldNotJudge
                                           : CheckOutcome::kWarned;
    if (c.outcome == CheckOutcome::kCouldNotJudge) c.reason = "what it read could not be judged";
}

}  // namespace

const char* check_outcome_name(CheckOutcome o) {
    switch (o) {
        case CheckOutcome::kPassed:
            return "passed";
        case CheckOutcome::kWarned:
            return "warned";
        case CheckOutcome::kFailed:
            return "failed";
        case CheckOutcome::kMeasured:
            return "measured";
        case CheckOutcome::kCouldNotJudge:
            return "could not judge";
        case CheckOutcome::kCouldNotRun:
            return "could not run";
        case CheckOutcome::kSkipped:
            return "skipped";
        case CheckOutcome::kNotApplicable:
            return "not applicable";
    }
    return "could not run";
}

std::string CoveredCheck::missing_text() const {
    if (outcome == CheckOutcome::kSkipped) return id + " (skipped with --skip)";
    return fmt::format("{} ({}{}{})", id, check_outcome_name(outcome), reason.empty() ? "" : ": ",
                       reason);
}

size_t Coverage::required() const {
    return std::count_if(checks.begin(), checks.end(),
                         [](const CoveredCheck& c) { return c.required; });
}

size_t Coverage::judged() const {
    return std::count_if(checks.begin(), checks.end(),
                         [](const CoveredCheck& c) { return c.required && c.judged(); });
}

std::vector<const CoveredCheck*> Coverage::missing() const {
    std::vector<const CoveredCheck*> out;
    for (const auto& c : checks)
        if (c.required && !c.judged()) out.push_back(&c);
    return out;
}

Coverage cover(const MachineClass& machine, const RunRecord& run) {
    Coverage out;
    out.machine = machine;
    for (auto& p : coverage_plan(machine)) {
        CoveredCheck c;
        c.id = p.id;
        c.kind = p.kind;
        c.required = p.required;
        c.why = p.why;
        const std::string stage = [&] {
            const auto it = run.bench_stage.find(p.id);
            return it == run.bench_stage.end() ? std::string() : it->second;
        }();
        if (skipped_with_option(run.skip, p.id) ||
            (!stage.empty() && skipped_with_option(run.skip, stage))) {
            c.outcome = CheckOutcome::kSkipped;
        } else if (p.kind == CheckKind::kDoctor) {
            doctor_outcome(run, c);
        } else if (p.kind == CheckKind::kBench) {
            bench_outcome(run, stage, c);
        } else {
            stage_outcome(run, c);
        }
        // A check the class does not require: judged, it counts when the host decides; not
        // judged, it is not applicable here, for its own reason or the class's.
        if (!c.required && c.judged() && p.host_decides) {
            c.required = true;
            c.why = "the host has it to judge";
        }
        if (!c.required && !c.judged() && c.outcome != CheckOutcome::kSkipped &&
            c.outcome != CheckOutcome::kCouldNotJudge) {
            c.outcome = CheckOutcome::kNotApplicable;
            if (!p.host_decides || c.reason.empty() || c.reason == "not run") c.reason = p.why;
        }
        if (!c.required && c.outcome == CheckOutcome::kCouldNotJudge && p.host_decides)
            c.required = true;  // an error reading what the host has is never "not applicable"
        out.checks.push_back(std::move(c));
    }
    return out;
}

nlohmann::json coverage_json(const Coverage& c) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& k : c.checks)
        checks.push_back({{"id", k.id},
                          {"kind", check_kind_name(k.kind)},
                          {"required", k.required},
                          {"why", k.why},
                          {"outcome", check_outcome_name(k.outcome)},
                          {"reason", k.reason}});
    nlohmann::json missing = nlohmann::json::array();
    for (const auto* m : c.missing()) missing.push_back(m->id);
    const auto& m = c.machine;
    return {{"class",
             {{"label", m.label()},
              {"gpu_model", m.gpu_model},
              {"gpus", m.gpus},
              {"nvlink_on_board", m.nvlink_on_board},
              {"nvswitch", m.nvswitch},
              {"level", level_label(m.level)},
              {"scope", scope_name(m.scope)}}},
            {"required", c.required()},
            {"judged", c.judged()},
            {"complete", c.complete()},
            {"missing", missing},
            {"checks", checks}};
}

std::string missing_line(const Coverage& c, size_t most) {
    const auto missing = c.missing();
    std::vector<std::string> names;
    for (size_t i = 0; i < missing.size() && i < most; ++i) names.push_back(missing[i]->id);
    if (missing.size() > most) names.push_back(fmt::format("{} more", missing.size() - most));
    return fmt::format("{} of {} required checks not judged: {}", missing.size(), c.required(),
                       join(names, ", "));
}

}  // namespace trainrig::validate

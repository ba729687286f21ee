#include "validate/stages/measuring_stage.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "validate/report_items.h"
#include "validate/stage_child.h"

namespace trainrig::validate {

namespace {

// A measuring stage whose child did not finish (stage_child.h): stopped at its limit (its
// measurements so far kept), hung past the grace and killed, crashed, or unable to start. The
// stage could not run, and an unknown item names the benchmarks to re-run alone.
Item unfinished_stage(StageRecord& s, const std::vector<std::string>& ids,
                      const StageLimits& limits, StageEnd end, const std::string& detail) {
    const std::string limit =
        fmt::format("it ran past {:.0f} s (3 x its {:.0f} s budget + 60 s, or --stage-timeout)",
                    limits.timeout_seconds, s.budget_seconds);
    const std::string rerun = fmt::format(
        "re-run the stage's benchmarks alone with -v (`trainrig bench run {} -v`)", join(ids, " "));
    s.state = StageState::kCouldNotRun;
    s.required = true;
    Item it;
    it.id = "stage." + s.name;
    it.stage = s.name;
    it.level = Level::kUnknown;
    switch (end) {
        case StageEnd::kTimedOut:
            s.reason = "stopped: " + limit + "; what it measured until then is kept";
            it.summary = fmt::format("the {} did not finish within {:.0f} s", s.title,
                                     limits.timeout_seconds);
            it.action = rerun +
                        " to see which one is slow; give a slow machine more time with "
                        "--stage-timeout";
            break;
        case StageEnd::kHung:
            s.reason = fmt::format(
                "hung: {} and did not stop {:.0f} s after being asked, so it "
                "was killed{}; its measurements are lost",
                limit, limits.grace_seconds, detail.empty() ? "" : " (" + detail + ")");
            it.summary = fmt::format(
                "the {} did not return: a call is stuck (the GPU driver, a "
                "dead mount)",
                s.title);
            it.action =
                "look for Xid errors and hung tasks (`trainrig doctor --only kmsg.xid`, "
                "`dmesg`), then " +
                rerun + " to see which one hangs";
            break;
        case StageEnd::kCrashed:
            s.reason = "crashed: " + detail + "; its measurements are lost";
            it.summary = fmt::format("the {} crashed", s.title);
            it.evidence = {detail};
            it.action = rerun +
                        " to see which one crashes; a crash in a GPU benchmark often "
                        "comes with an Xid error (`trainrig doctor --only kmsg.xid`)";
            break;
        default:
            s.reason = detail;
            it.summary = fmt::format("the {} could not start its benchmarks", s.title);
            it.evidence = {detail};
            it.action = rerun + " to see the error";
            break;
    }
    return it;
}

// The child's records, errors and skips join the run's; with --baseline, the new records are
// judged against its medians. A stage that did not finish (interrupted, stopped at its limit)
// yields no judgement: what it measured until then is kept as evidence, marked partial, and
// never a reason to act (a training run stopped after one step has not had the chance to learn).
void merge_child(RunContext& ctx, StageOutcome& child, bool unfinished) {
    bench::BenchRun& run = ctx.run;
    const size_t first = run.records.size();
    for (auto& r : child.run.records) {
        r.partial = r.partial || unfinished;
        run.records.push_back(std::move(r));
    }
    for (auto& e : child.run.errors) run.errors.push_back(std::move(e));
    for (auto& k : child.run.skipped) run.skipped.push_back(std::move(k));
    if (child.run.machine.contains("gpus")) run.machine["gpus"] = child.run.machine["gpus"];
    if (ctx.baseline) {
        std::vector<bench::BenchRecord> fresh(run.records.begin() + first, run.records.end());
        ctx.baseline_about["matched"] = ctx.baseline_about["matched"].get<size_t>() +
                                        bench::apply_baseline(fresh, *ctx.baseline);
        std::copy(fresh.begin(), fresh.end(), run.records.begin() + first);
    }
}

}  // namespace

std::vector<std::string> MeasuringStage::chosen(const RunContext& ctx) const {
    std::vector<std::string> out;
    for (const auto& id : benchmarks(ctx))
        if (!ctx.skipped_by_user(id)) out.push_back(id);
    return out;
}

std::optional<Skip> MeasuringStage::applies(const RunContext& ctx) const {
    if (!ctx.snapshot) return Skip{};
    if (!ctx.live()) return Skip{kLiveOnly};
    if (RunContext::interrupted()) return Skip{kInterruptedBefore};
    if (ctx.skipped_by_user(id())) return Skip{kSkippedByUser, StageState::kSkipped, true};
    if (!ctx.hung.empty())
        return Skip{ctx.after_hang(),
                    required(ctx) ? StageState::kCouldNotRun : StageState::kSkipped};
    if (chosen(ctx).empty())
        return Skip{"every benchmark of it skipped with --skip", StageState::kSkipped, true};
    return std::nullopt;
}

Status MeasuringStage::run(RunContext& ctx, StageRecord& s) {
    const std::vector<std::string> ids = chosen(ctx);
    bench::BenchOptions options = ctx.bench_options();
    if (Status st = prepare(ctx, options); !st.ok()) {
        s.state = RunContext::interrupted() ? StageState::kInterrupted : StageState::kCouldNotRun;
        s.reason = st.message();
        return ok_status();
    }
    const StageLimits limits = stage_limits(s.budget_seconds, ctx.options.stage_timeout);
    StageOutcome child = run_stage_child(ids, options, limits);
    if (child.end == StageEnd::kHung) ctx.hung = s.name;
    if (RunContext::interrupted()) {
        s.state = StageState::kInterrupted;
        if (child.end == StageEnd::kHung)
            s.reason = fmt::format("interrupted, and it did not stop within {:.0f} s: killed",
                                   limits.grace_seconds);
    } else if (child.end == StageEnd::kHung || child.end == StageEnd::kCrashed ||
               child.end == StageEnd::kFailed) {
        ctx.items.push_back(unfinished_stage(s, ids, limits, child.end, child.detail));
        return ok_status();
    }
    bench::BenchRun& run = ctx.run;
    const size_t records = run.records.size(), errors = run.errors.size(),
                 skips = run.skipped.size();
    merge_child(ctx, child,
                s.state == StageState::kInterrupted || child.end == StageEnd::kTimedOut ||
                    child.end == StageEnd::kInterrupted);
    bench_items(run, records, errors, s.name, ctx.items);
    if (s.state == StageState::kInterrupted) return ok_status();
    const size_t ran = ids.size() - (run.skipped.size() - skips);
    if (child.end == StageEnd::kTimedOut) {
        ctx.items.push_back(unfinished_stage(s, ids, limits, child.end, child.detail));
    } else if (ran == 0) {
        std::vector<std::string> why;
        for (size_t i = skips; i < run.skipped.size(); ++i)
            why.push_back(run.skipped[i].bench + ": " + run.skipped[i].text);
        s.state = s.required ? StageState::kCouldNotRun : StageState::kSkipped;
        s.reason = join(why, "; ");
    } else {
        s.state = run.errors.size() > errors && run.errors.size() - errors == ran
                      ? StageState::kCouldNotRun
                      : StageState::kRan;
        if (s.state == StageState::kCouldNotRun) s.reason = "every benchmark failed to run";
    }
    return ok_status();
}

}  // namespace trainrig::validate

#include "validate/stages/batch_probe_stage.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

using nlohmann::json;

constexpr const char* kStageName = "batch-probe";

std::string rerun_command() {
    return fmt::format("trainrig train --find-batch --backend cuda --model {} --seq {} -v",
                       kBatchProbeModel, kBatchProbeSeq);
}

Item stage_item(const std::string& summary, const std::string& action,
                std::vector<std::string> evidence = {}) {
    Item it;
    it.id = std::string("stage.") + kStageName;
    it.stage = kStageName;
    it.level = Level::kUnknown;
    it.summary = summary;
    it.evidence = std::move(evidence);
    it.action = action;
    return it;
}

}  // namespace

std::vector<std::string> batch_probe_args() {
    return {"train",   "--find-batch",   "--backend", "cuda",
            "--model", kBatchProbeModel, "--seq",     std::to_string(kBatchProbeSeq),
            "--json",  "--no-progress"};
}

BatchProbeOutcome read_batch_probe_child(const Result<SupervisedRun>& child) {
    BatchProbeOutcome b;
    if (auto e = ended_without_output(child)) {
        b.end = e->end;
        b.detail = std::move(e->detail);
        return b;
    }
    const SupervisedRun& c = *child;
    json doc = json::parse(c.output.out, nullptr, false);
    const bool has_doc = doc.is_object() && doc.value("schema", "") == "trainrig.train.find_batch";
    if (has_doc) b.doc = std::move(doc);
    b.end = output_end(c, has_doc);
    if (b.end == StageEnd::kFailed) {
        const std::string why = last_line(c.output.err);
        b.detail = fmt::format("`trainrig train --find-batch` exited {} without a result{}",
                               c.output.exit_code, why.empty() ? "" : ": " + why);
    }
    return b;
}

std::vector<bench::BenchRecord> batch_probe_records(const json& doc, int gpu) {
    std::vector<bench::BenchRecord> out;
    if (!doc.is_object()) return out;
    const json model = doc.value("model", json::object());
    const json base = {{"model", model.value("name", "")},
                       {"seq", doc.value("seq", 0)},
                       {"capacity_bytes", doc.value("capacity_bytes", json(nullptr))},
                       {"headroom", doc.value("headroom", json(nullptr))}};
    const std::string estimate_source =
        doc.value("estimate", json::object()).value("source", "plan's memory model");
    for (const auto& s : doc.value("sizes", json::array())) {
        const std::string verdict = s.value("verdict", "");
        if (verdict != "fits" && verdict != "over_headroom") continue;
        json params = base;
        params["batch"] = s.value("batch", 0);
        params["verdict"] = verdict;
        params["estimate_bytes"] = s.value("estimate_bytes", json(nullptr));
        params["peak_over_estimate"] = s.value("peak_over_estimate", json(nullptr));
        bench::BenchRecord peak;
        peak.bench = kStageName;
        peak.name = "peak-memory";
        peak.params = params;
        peak.target = {{"gpu", gpu}};
        peak.unit = "bytes";
        if (s["peak_bytes"].is_number()) peak.samples = {s["peak_bytes"].get<double>()};
        peak.no_expectation = "a measurement: " + estimate_source + " gives params.estimate_bytes";
        out.push_back(peak);
        bench::BenchRecord speed = peak;
        speed.name = "tokens-per-s";
        speed.unit = "tokens/s";
        speed.samples = {s.value("tokens_per_s", 0.0)};
        speed.no_expectation = "a measurement: a few steps per size, for choosing between sizes";
        out.push_back(speed);
    }
    if (doc["micro_batch"].is_number()) {
        bench::BenchRecord mb;
        mb.bench = kStageName;
        mb.name = "micro-batch";
        mb.params = base;
        mb.params["bound_reached"] = doc.value("bound_reached", false);
        mb.target = {{"gpu", gpu}};
        mb.unit = "sequences";
        mb.samples = {doc["micro_batch"].get<double>()};
        mb.no_expectation = "the largest micro-batch that trained with the headroom kept free";
        out.push_back(mb);
    }
    return out;
}

BatchProbeOutcome run_batch_probe_child(const StageLimits& limits) {
    return read_batch_probe_child(run_self(batch_probe_args(), limits));
}

void apply_batch_probe(StageRecord& s, const BatchProbeOutcome& b, const StageLimits& limits,
                       bench::BenchRun& run, std::vector<Item>& items, std::string& hung) {
    const std::string rerun = fmt::format("re-run it alone: `{}`", rerun_command());
    // A probe that did not finish leaves sizes as evidence, not the machine's answer.
    for (auto& r : batch_probe_records(b.doc, 0)) {
        r.partial = b.end != StageEnd::kFinished;
        run.records.push_back(std::move(r));
    }
    const std::string answer = b.doc.is_object() ? b.doc.value("answer", "") : "";
    switch (b.end) {
        case StageEnd::kInterrupted:
            s.state = StageState::kInterrupted;
            return;
        case StageEnd::kHung:
            hung = s.name;
            s.state = StageState::kCouldNotRun;
            s.reason = fmt::format(
                "hung: it did not stop {:.0f} s after being asked, so it was "
                "killed{}; its measurements are lost",
                limits.grace_seconds, b.detail.empty() ? "" : " (" + b.detail + ")");
            items.push_back(stage_item(
                "the micro-batch probe did not return: a call is stuck (the GPU driver)",
                "look for Xid errors (`trainrig doctor --only kmsg.xid`, `dmesg`), then " + rerun));
            return;
        case StageEnd::kCrashed:
            s.state = StageState::kCouldNotRun;
            s.reason = "crashed: " + b.detail + "; its measurements are lost";
            items.push_back(stage_item("the micro-batch probe crashed",
                                       rerun + "; a crash on the GPU often comes with an Xid "
                                               "error (`trainrig doctor --only kmsg.xid`)",
                                       {b.detail}));
            return;
        case StageEnd::kFailed:
            s.state = StageState::kCouldNotRun;
            s.reason = b.detail;
            items.push_back(stage_item("the micro-batch probe could not run", rerun, {b.detail}));
            return;
        case StageEnd::kTimedOut:
            s.state = StageState::kCouldNotRun;
            s.reason = fmt::format(
                "stopped: it ran past {:.0f} s; the sizes it measured until "
                "then are kept",
                limits.timeout_seconds);
            items.push_back(
                stage_item(fmt::format("the micro-batch probe did not finish within {:.0f} s",
                                       limits.timeout_seconds),
                           rerun + "; give a slow machine more time with --stage-timeout"));
            return;
        case StageEnd::kFinished:
            break;
    }
    if (answer == "found") {
        s.state = StageState::kRan;
        return;
    }
    const std::string why = b.doc.value("error", json(nullptr)).is_string()
                                ? b.doc["error"].get<std::string>()
                                : std::string();
    if (answer == "nothing_fits") {
        s.state = StageState::kRan;
        Item it;
        it.id = "bench.batch-probe.micro-batch";
        it.stage = kStageName;
        it.level = Level::kWarn;
        it.devices = {"GPU 0"};
        it.summary = fmt::format(
            "{} at {} tokens does not train even at micro-batch 1 in the GPU's free memory",
            kBatchProbeModel, kBatchProbeSeq);
        it.measured = "nothing fits";
        it.evidence = {fmt::format("{} bytes free for the trials",
                                   b.doc.value("capacity_bytes", uint64_t{0}))};
        it.action = "look for other processes holding GPU memory (`nvidia-smi`), then " + rerun;
        items.push_back(std::move(it));
        return;
    }
    s.state = StageState::kCouldNotRun;
    s.reason = why.empty() ? "the probe stopped without an answer" : why;
    // A size whose trial was killed for making no progress: most often a hung GPU.
    bool size_hung = false;
    for (const auto& size : b.doc.value("sizes", json::array()))
        size_hung |= size.value("verdict", "") == "did_not_finish";
    items.push_back(stage_item(
        "the micro-batch probe stopped: " + s.reason,
        size_hung
            ? "look for Xid errors (`trainrig doctor --only kmsg.xid`, `dmesg`), then " + rerun
            : rerun));
}

namespace {

class BatchProbeStage final : public Stage {
public:
    const char* id() const override { return kStageName; }
    const char* title() const override { return "the largest micro-batch (train --find-batch)"; }
    double budget_seconds(RunLevel l) const override {
        return l == RunLevel::kQuick ? 0 : kBatchProbeBudget;
    }

    std::optional<Skip> applies(const RunContext& ctx) const override {
        const std::vector<int>& gpus = ctx.options.gpus;
        if (!ctx.snapshot) return Skip{};
        if (!ctx.live()) return Skip{kLiveOnly};
        if (ctx.scope != Scope::kGpu) return Skip{kNoGpu};
        if (ctx.options.level == RunLevel::kQuick) return Skip{"runs at --level standard and long"};
        if (ctx.skipped_by_user(id())) return Skip{kSkippedByUser, StageState::kSkipped, true};
        if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), 0) == gpus.end())
            return Skip{"--gpus leaves out GPU 0, the GPU the probe trains on"};
        if (RunContext::interrupted()) return Skip{kInterruptedBefore};
        if (!ctx.hung.empty()) return Skip{ctx.after_hang()};
        return std::nullopt;
    }

    Status run(RunContext& ctx, StageRecord& record) override {
        const StageLimits limits = stage_limits(record.budget_seconds, ctx.options.stage_timeout);
        const BatchProbeOutcome b = run_batch_probe_child(limits);
        apply_batch_probe(record, b, limits, ctx.run, ctx.items, ctx.hung);
        return ok_status();
    }
};

}  // namespace

std::unique_ptr<Stage> batch_probe_stage() { return std::make_unique<BatchProbeStage>(); }

}  // namespace trainrig::validate

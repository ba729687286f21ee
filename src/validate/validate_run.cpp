#include "validate/validate_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "bench/bench_runner.h"
#include "bench/machine_facts.h"
#include "core/cancel_signals.h"
#include "core/text.h"
#include "data/loader/token_corpus.h"
#include "data/tokenizer/open_tokenizer.h"
#include "doctor/report.h"
#include "measure/baseline.h"
#include "validate/coverage.h"
#include "validate/report_compare.h"
#include "validate/report_trust.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A line on stderr as each stage starts: its share of the level's time, the time so far and
// what the stages still to come are budgeted (an estimate for an 8-GPU node: a smaller machine
// is quicker).
class Progress {
public:
    Progress(bool on, const std::vector<StageRecord>& stages) : on_(on), stages_(stages) {}
    // "[6/8]": the stage's place among all of them, skipped ones counted, so the numbers run
    // to the total whatever this machine leaves out.
    void start(const StageRecord& s) {
        if (!on_) return;
        double to_go = 0;
        size_t at = 0;
        bool after = false;
        for (size_t i = 0; i < stages_.size(); ++i) {
            if (stages_[i].name == s.name) at = i + 1;
            after = after || stages_[i].name == s.name;
            if (after) to_go += stages_[i].budget_seconds;
        }
        std::fprintf(stderr,
                     "validate: [%zu/%zu] %s (about %.0f s); %.0f s so far, at most "
                     "about %.0f s to go\n",
                     at, stages_.size(), s.title.c_str(), s.budget_seconds, seconds_since(t0_),
                     to_go);
    }

private:
    bool on_;
    const std::vector<StageRecord>& stages_;
    Clock::time_point t0_ = Clock::now();
};

// --baseline: the measurements of an earlier report become the expected values of the same
// measurements now (measure/baseline.h), judged with bench's tolerance.
Result<bench::Baseline> load_report_baseline(const std::string& path, nlohmann::json& about) {
    auto doc = load_report(path);
    if (!doc.ok()) return Status{doc.status().code(), "--baseline " + doc.status().message()};
    const auto b = doc->find("bench");
    if (b == doc->end() || !b->is_object())
        return Status{Errc::kInvalidInput,
                      fmt::format("--baseline {}: the report has no measurements (it judged a "
                                  "machine tree, or was interrupted before them)",
                                  path)};
    auto baseline = bench::baseline_from_document(*b, path);
    if (!baseline.ok()) return baseline.status();
    about = {{"path", path},
             {"host", doc->value("host", nlohmann::json(nullptr))},
             {"level", doc->value("level", "")},
             {"finished_at", doc->value("finished_at", "")},
             {"verdict", doc->value("verdict", "")},
             {"measurements", baseline->medians.size()},
             {"matched", 0}};
    return baseline;
}

// Before the first measuring stage: the machine's facts for the bench document, and the stages
// that run beside the measuring ones (watch) start.
void begin_measurements(RunContext& ctx, const std::vector<std::unique_ptr<Stage>>& stages) {
    if (ctx.live()) ctx.run.machine = bench::collect_machine_facts();
    for (const auto& s : stages) s->start_beside(ctx);
}

}  // namespace

Result<RunLevel> level_from_name(const std::string& name) {
    if (name == "quick") return RunLevel::kQuick;
    if (name == "standard") return RunLevel::kStandard;
    if (name == "long") return RunLevel::kLong;
    return Status{Errc::kInvalidInput,
                  fmt::format("--level {}: not a level (quick, standard, long)", name)};
}

const char* level_label(RunLevel l) {
    return l == RunLevel::kQuick ? "quick" : l == RunLevel::kStandard ? "standard" : "long";
}

const std::vector<std::string>& stage_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& s : make_stages()) out.push_back(s->id());
        return out;
    }();
    return names;
}

Status check_skip(const std::vector<std::string>& skip) {
    const auto benchmarks = bench::make_benchmarks();
    for (const auto& s : skip) {
        bool known =
            std::find(stage_names().begin(), stage_names().end(), s) != stage_names().end() ||
            find_rule(s);
        for (const auto& r : all_rules()) known = known || r.id.starts_with(s + ".");
        for (const auto& b : benchmarks) known = known || s == b->id();
        if (!known)
            return {Errc::kInvalidInput,
                    fmt::format("--skip {}: neither a stage ({}), a doctor check or area, nor a "
                                "benchmark",
                                s, join(stage_names(), ", ")),
                    "`trainrig doctor --list` and `trainrig bench list` show the ids"};
    }
    return ok_status();
}

Status check_options(const ValidateOptions& o) {
    TRAINRIG_TRY(check_skip(o.skip));
    if (o.tokenizer.empty() != o.inputs.empty())
        return {Errc::kInvalidInput,
                "--tokenizer and --input go together: the tokenizer benchmark encodes the "
                "--input text with --tokenizer"};
    if (!o.tokenizer.empty()) TRAINRIG_TRY(data::check_tokenizer_spec(o.tokenizer));
    if (!o.shards.empty())
        if (auto corpus = data::TokenCorpus::open(o.shards); !corpus.ok())
            return {corpus.status().code(), "--shards: " + corpus.status().message()};
    if (!o.baseline.empty()) {
        nlohmann::json about;
        TRAINRIG_TRY(load_report_baseline(o.baseline, about).status());
    }
    return ok_status();
}

Result<ValidateResult> run_validate(const ValidateOptions& o) {
    // One handler for the whole run: a stage's own resets the flag when it starts, but
    // received() keeps the signal, so no Ctrl-C between stages is lost.
    const CancelSignals signals;
    const std::time_t started = std::time(nullptr);
    RunContext ctx(o);
    if (!o.baseline.empty()) {
        auto b = load_report_baseline(o.baseline, ctx.baseline_about);
        if (!b.ok()) return b.status();
        if (const std::string changed = report_changes(o.baseline); !changed.empty())
            std::fprintf(stderr,
                         "trainrig validate: --baseline %s is not as validate wrote it: %s; "
                         "`trainrig report verify %s` lists every file.\n",
                         o.baseline.c_str(), changed.c_str(), o.baseline.c_str());
        ctx.baseline = std::move(b).value();
    }

    const auto stages = make_stages();
    std::vector<StageRecord> records;
    for (const auto& s : stages) {
        StageRecord& r = records.emplace_back();
        r.name = s->id();
        r.title = s->title();
        r.budget_seconds = s->budget_seconds(o.level);
    }
    Progress progress(o.progress, records);
    bool measuring = false;
    for (size_t i = 0; i < stages.size(); ++i) {
        Stage& stage = *stages[i];
        StageRecord& record = records[i];
        if (stage.measures() && !measuring) {
            measuring = true;
            begin_measurements(ctx, stages);
        }
        record.required = stage.required(ctx);
        if (auto skip = stage.applies(ctx)) {
            record.state = skip->state;
            record.reason = skip->reason;
            record.required = record.required && !skip->by_user;
            continue;
        }
        if (!stage.beside()) progress.start(record);
        const auto t0 = Clock::now();
        TRAINRIG_TRY(stage.run(ctx, record));
        if (!stage.beside()) record.seconds = seconds_since(t0);
    }
    if (ctx.live()) {
        ctx.report.set("bench", bench::bench_document(ctx.run));
        ctx.report.add_raw("bench.json", ctx.report.at("bench"));
    }

    if (ctx.scope == Scope::kGpu &&
        std::any_of(ctx.run.records.begin(), ctx.run.records.end(), bench::on_emulated_gpu))
        ctx.scope = Scope::kEmulated;
    ValidateResult out;
    out.incomplete = RunContext::interrupted();
    std::string uncovered;
    if (ctx.snapshot) {
        RunRecord run{o.skip, &ctx.findings, &ctx.run, &records, &ctx.items, {}};
        for (const auto& s : stages)
            for (const auto& b : s->bench_ids(ctx)) run.bench_stage[b] = s->id();
        const Coverage coverage = cover(machine_class(*ctx.snapshot, ctx.scope, o), run);
        if (!coverage.complete()) uncovered = missing_line(coverage);
        ctx.report.set("coverage", coverage_json(coverage));
    } else {
        ctx.report.set("coverage", nullptr);  // the machine was not read
    }
    out.outcome = judge(records, ctx.items, ctx.scope, out.incomplete, uncovered);
    RunSummary summary{out.outcome,        ctx.scope, level_label(o.level), out.incomplete, started,
                       std::time(nullptr), o.argv,    ctx.baseline_about};
    out.report = ctx.report.finish(summary, records, std::move(ctx.items));
    out.raw = ctx.report.take_raw();
    return out;
}

}  // namespace trainrig::validate

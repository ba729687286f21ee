#include "validate/validate_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include "bench/baseline.h"
#include "bench/bench_runner.h"
#include "bench/machine_facts.h"
#include "core/cancel_signals.h"
#include "core/gpu_selection.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "core/utc_time.h"
#include "core/version.h"
#include "data/loader/token_corpus.h"
#include "data/tokenizer/open_tokenizer.h"
#include "doctor/gpus.h"
#include "doctor/report.h"
#include "snapshot/snapshot.h"
#include "topo/gpu_matrix.h"
#include "topo/render_topo.h"
#include "validate/batch_probe_stage.h"
#include "validate/report_compare.h"
#include "validate/report_items.h"
#include "validate/report_trust.h"
#include "validate/stage_child.h"
#include "validate/synthetic_shard.h"
#include "validate/versions.h"
#include "validate/watch_recorder.h"

namespace trainrig::validate {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Each stage's share of the level's time on this machine class (docs/report.md, "Levels").
struct Budgets {
    double doctor, topology, host, gpu, data, training;
};
Budgets budgets(RunLevel l) {
    switch (l) {
        case RunLevel::kQuick:
            return {5, 1, 10, 60, 5, 15};
        case RunLevel::kStandard:
            return {10, 1, 90, 600, 30, 120};
        case RunLevel::kLong:
            return {10, 1, 180, 3600, 30, 600};
    }
    return {5, 1, 10, 60, 5, 15};
}

// Sizes per level. quick is an admission check: small arrays and files, few repeats, a training
// run of a few steps that must still show the loss falling; standard uses bench's defaults and a
// 2-minute burn-in; long burns in for an hour.
bench::BenchOptions bench_options(const ValidateOptions& o) {
    bench::BenchOptions b;
    b.gpus = o.gpus;
    b.data_dir = o.collect.data_dir.value_or("");
    b.tokenizer = o.tokenizer;
    b.inputs = o.inputs;
    b.shards = o.shards;
    b.steps = 5000;  // loader batches per repeat (quick: fewer, below)
    // The tokenizer on one thread and, past quick, on every core (`data tokenize`'s default).
    if (const unsigned cores = std::thread::hardware_concurrency();
        o.level != RunLevel::kQuick && cores > 1)
        b.tokenizer_threads = {1, cores};
    switch (o.level) {
        case RunLevel::kQuick:
            b.quick = true;
            b.repeats = 3;
            b.array_bytes = 64ull << 20;
            b.file_bytes = 256ull << 20;
            b.seconds = 2;
            b.train_seq = 64;
            b.train_batch = 2;
            b.steps = 1000;  // loader batches per repeat: about 10 ms, well above the clock's grain
            break;
        case RunLevel::kStandard:
            b.seconds = 120;  // burn; storage samples take their default
            break;
        case RunLevel::kLong:
            b.seconds = 3600;
            break;
    }
    return b;
}

// The data-path stage's generated tokens when --shards names none: 8 MiB at quick, 128 MiB
// (larger than most last-level caches, so the loader's random windows miss them) otherwise.
uint64_t synthetic_tokens(RunLevel l) { return l == RunLevel::kQuick ? 4ull << 20 : 64ull << 20; }

bool listed(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// A line on stderr as each stage starts: its share of the level's time, the time so far and
// what the stages still to come are budgeted (an estimate for an 8-GPU node: a smaller machine
// is quicker).
class Progress {
public:
    Progress(bool on, const std::vector<Stage>& stages) : on_(on), stages_(stages) {}
    // "[6/8]": the stage's place among all of them, skipped ones counted, so the numbers run
    // to the total whatever this machine leaves out.
    void start(const Stage& s) {
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
    const std::vector<Stage>& stages_;
    Clock::time_point t0_ = Clock::now();
};

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
    static const std::vector<std::string> names = {"doctor",      "topology",  "host-bench",
                                                   "gpu-bench",   "data-path", "training",
                                                   "batch-probe", "watch"};
    return names;
}

Status check_skip(const std::vector<std::string>& skip) {
    const auto benchmarks = bench::make_benchmarks();
    for (const auto& s : skip) {
        bool known = listed(stage_names(), s) || find_rule(s);
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

namespace {

// --baseline: the measurements of an earlier report become the expected values of the same
// measurements now (bench/baseline.h), judged with bench's tolerance.
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

// A measuring stage whose child did not finish (stage_child.h): stopped at its limit (its
// measurements so far kept), hung past the grace and killed, crashed, or unable to start. The
// stage could not run, and an unknown item names the benchmarks to re-run alone.
Item unfinished_stage(Stage& s, const std::string& name, const std::vector<std::string>& ids,
                      const StageLimits& limits, StageEnd end, const std::string& detail) {
    const std::string limit =
        fmt::format("it ran past {:.0f} s (3 x its {:.0f} s budget + 60 s, or --stage-timeout)",
                    limits.timeout_seconds, s.budget_seconds);
    const std::string rerun = fmt::format(
        "re-run the stage's benchmarks alone with -v (`trainrig bench run {} -v`)", join(ids, " "));
    s.state = StageState::kCouldNotRun;
    s.required = true;
    Item it;
    it.id = "stage." + name;
    it.stage = name;
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

}  // namespace

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
    const auto interrupted = [] { return CancelSignals::received() != 0; };
    const std::time_t started = std::time(nullptr);
    const Budgets budget = budgets(o.level);
    const bool tree = !RootFs(o.collect.root).is_live();
    auto skipped_by_user = [&](const std::string& stage) { return listed(o.skip, stage); };

    std::vector<Stage> stages = {
        {"doctor", "configuration checks (doctor)", budget.doctor, 0, StageState::kSkipped, "",
         true},
        {"topology", "topology", budget.topology, 0, StageState::kSkipped, "", false},
        {"host-bench", "host benchmarks (memory, storage)", budget.host, 0, StageState::kSkipped,
         "", false},
        {"gpu-bench", "GPU benchmarks", budget.gpu, 0, StageState::kSkipped, "", false},
        {"data-path", "data path (tokenizer, loader)", budget.data, 0, StageState::kSkipped, "",
         false},
        {"training", "a training run", budget.training, 0, StageState::kSkipped, "", true},
        {"batch-probe", "the largest micro-batch (train --find-batch)",
         o.level == RunLevel::kQuick ? 0 : kBatchProbeBudget, 0, StageState::kSkipped, "", false},
        {"watch", "GPU telemetry through the run (watch)", 0, 0, StageState::kSkipped, "", false},
    };
    auto stage = [&](const char* name) -> Stage& {
        return *std::find_if(stages.begin(), stages.end(),
                             [&](const Stage& s) { return s.name == name; });
    };
    std::vector<Item> items;
    ValidateResult out;
    nlohmann::json report = {{"schema", "trainrig.validate"}, {"schema_version", 1}};
    std::optional<bench::Baseline> baseline;
    nlohmann::json baseline_about = nullptr;
    if (!o.baseline.empty()) {
        auto b = load_report_baseline(o.baseline, baseline_about);
        if (!b.ok()) return b.status();
        if (const std::string changed = report_changes(o.baseline); !changed.empty())
            std::fprintf(stderr,
                         "trainrig validate: --baseline %s is not as validate wrote it: %s; "
                         "`trainrig report verify %s` lists every file.\n",
                         o.baseline.c_str(), changed.c_str(), o.baseline.c_str());
        baseline = std::move(b).value();
    }
    Progress progress(o.progress, stages);

    // 1. doctor: every rule (less the skipped ids and areas).
    Stage& d = stage("doctor");
    progress.start(d);
    auto t0 = Clock::now();
    Selection sel;
    for (const auto& r : all_rules())
        for (const auto& s : o.skip)
            if (r.id == s || r.id.starts_with(s + ".")) sel.skip.push_back(r.id);
    CollectOptions collect = o.collect;
    collect.torch = selected("stack.torch", sel) || selected("stack.nccl", sel);
    // quick is an admission check: PyTorch's metadata only. The longer levels can afford to
    // import it and ask whether it can use CUDA.
    collect.torch_import = collect.torch && (collect.torch_import || o.level != RunLevel::kQuick);
    auto snap = collect_snapshot(collect);
    if (!snap.ok() && !interrupted()) return snap.status();
    Scope scope = Scope::kTree;
    if (snap.ok()) {
        RuleOptions ro;
        if (o.expect_gpus >= 0) ro.expect_gpus = o.expect_gpus;
        DoctorReport dr;
        dr.source = tree ? "machine tree " + snap->root : std::string("live machine");
        dr.hostname = snap->host.hostname.is_known() ? snap->host.hostname.value() : "unknown host";
        dr.collected_at = snap->collected_at;
        dr.findings = judge(*snap, ro, sel);
        for (const auto& f : dr.findings)
            if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn ||
                f.status == FindingStatus::kError)
                items.push_back(finding_item(f));
        d.state = StageState::kRan;
        report["doctor"] = render_json(dr);
        report["host"] = dr.hostname;
        report["versions"] = machine_versions(*snap);
        out.raw["raw/snapshot.json"] = snapshot_to_json(*snap).dump(1) + "\n";
        // A GPU machine is one whose PCI bus or driver shows an NVIDIA GPU: a container may hide
        // the PCI tree while NVML still answers for the GPUs it was given.
        const bool nvml_gpus = snap->nvml.is_known() && !snap->nvml.value().gpus.empty();
        scope = tree                                            ? Scope::kTree
                : select_gpus(*snap).gpus.empty() && !nvml_gpus ? Scope::kHost
                                                                : Scope::kGpu;
        // --gpus names GPUs of this machine: the driver's, else the PCI bus's.
        const size_t visible =
            nvml_gpus ? snap->nvml.value().gpus.size() : select_gpus(*snap).gpus.size();
        TRAINRIG_TRY(check_gpu_selection(o.gpus, visible));
    } else {
        d.state = StageState::kInterrupted;
    }
    d.seconds = seconds_since(t0);

    // 2. topology, from the same snapshot.
    Stage& topo = stage("topology");
    if (snap.ok() && !interrupted()) {
        progress.start(topo);
        t0 = Clock::now();
        if (skipped_by_user("topology")) {
            topo.reason = "skipped with --skip";
        } else {
            report["topology"] = render_topo_json(build_gpu_matrix(*snap));
            topo.state = StageState::kRan;
        }
        topo.seconds = seconds_since(t0);
    }

    // 3-5. measurements, with watch sampling the GPUs throughout.
    const bool live = !tree && snap.ok();
    const char* live_only = "--root judges a machine tree: this stage needs the live machine";
    bench::BenchOptions stage_options = bench_options(o);
    stage_options.train_backend = scope == Scope::kGpu ? "cuda" : "cpu";
    bench::BenchRun run;
    if (live) run.machine = bench::collect_machine_facts();
    std::optional<WatchRecorder> watch;
    if (live && !skipped_by_user("watch") && !interrupted()) watch.emplace(1.0);
    const auto t_watch = Clock::now();

    std::string hung;  // a stage killed in a hung call: no later stage runs on this machine
    // `prepare`, when given, readies the stage's input (bench options) once the stage is sure
    // to run; its error is the stage's "could not run".
    using Prepare = std::function<Status(bench::BenchOptions&)>;
    auto measure = [&](const char* name, std::vector<std::string> ids, bool required,
                       const Prepare& prepare = nullptr) {
        Stage& s = stage(name);
        s.required = required;
        if (!snap.ok()) return;
        if (!live) {
            s.reason = live_only;
            return;
        }
        if (interrupted()) {
            s.reason = "interrupted before it started";
            return;
        }
        if (skipped_by_user(name)) {
            s.reason = "skipped with --skip";
            s.required = false;
            return;
        }
        if (!hung.empty()) {
            s.state = required ? StageState::kCouldNotRun : StageState::kSkipped;
            s.reason = "not run: the " + hung + " stage hung and was killed";
            return;
        }
        std::vector<std::string> chosen;
        for (const auto& id : ids)
            if (!listed(o.skip, id)) chosen.push_back(id);
        if (chosen.empty()) {
            s.reason = "every benchmark of it skipped with --skip";
            s.required = false;
            return;
        }
        bench::BenchOptions options = stage_options;
        progress.start(s);
        const auto t = Clock::now();
        if (prepare) {
            if (Status st = prepare(options); !st.ok()) {
                s.state = interrupted() ? StageState::kInterrupted : StageState::kCouldNotRun;
                s.reason = st.message();
                s.seconds = seconds_since(t);
                return;
            }
        }
        const StageLimits limits = stage_limits(s.budget_seconds, o.stage_timeout);
        StageOutcome child = run_stage_child(chosen, options, limits);
        s.seconds = seconds_since(t);
        if (child.end == StageEnd::kHung) hung = name;
        if (interrupted()) {
            s.state = StageState::kInterrupted;
            if (child.end == StageEnd::kHung)
                s.reason = fmt::format("interrupted, and it did not stop within {:.0f} s: killed",
                                       limits.grace_seconds);
        } else if (child.end == StageEnd::kHung || child.end == StageEnd::kCrashed ||
                   child.end == StageEnd::kFailed) {
            items.push_back(unfinished_stage(s, name, chosen, limits, child.end, child.detail));
            return;
        }
        const size_t records = run.records.size(), errors = run.errors.size(),
                     skips = run.skipped.size();
        // A stage that did not finish (interrupted, stopped at its limit) yields no judgement:
        // what it measured until then is kept as evidence, marked partial, and never a reason
        // to act (a training run stopped after one step has not had the chance to learn).
        const bool unfinished = s.state == StageState::kInterrupted ||
                                child.end == StageEnd::kTimedOut ||
                                child.end == StageEnd::kInterrupted;
        for (auto& r : child.run.records) {
            r.partial = r.partial || unfinished;
            run.records.push_back(std::move(r));
        }
        for (auto& e : child.run.errors) run.errors.push_back(std::move(e));
        for (auto& k : child.run.skipped) run.skipped.push_back(std::move(k));
        if (child.run.machine.contains("gpus")) run.machine["gpus"] = child.run.machine["gpus"];
        if (baseline) {
            std::vector<bench::BenchRecord> fresh(run.records.begin() + records, run.records.end());
            baseline_about["matched"] =
                baseline_about["matched"].get<size_t>() + bench::apply_baseline(fresh, *baseline);
            std::copy(fresh.begin(), fresh.end(), run.records.begin() + records);
        }
        bench_items(run, records, errors, name, items);
        if (s.state == StageState::kInterrupted) return;
        const size_t ran = chosen.size() - (run.skipped.size() - skips);
        if (child.end == StageEnd::kTimedOut) {
            items.push_back(unfinished_stage(s, name, chosen, limits, child.end, child.detail));
        } else if (ran == 0) {
            std::vector<std::string> why;
            for (size_t i = skips; i < run.skipped.size(); ++i)
                why.push_back(run.skipped[i].bench + ": " + run.skipped[i].text);
            s.state = required ? StageState::kCouldNotRun : StageState::kSkipped;
            s.reason = join(why, "; ");
        } else {
            s.state = run.errors.size() > errors && run.errors.size() - errors == ran
                          ? StageState::kCouldNotRun
                          : StageState::kRan;
            if (s.state == StageState::kCouldNotRun) s.reason = "every benchmark failed to run";
        }
    };
    measure("host-bench", {"cpu-mem", "storage"}, false);
    std::vector<std::string> gpu_ids = {"h2d", "d2h", "hbm", "gemm", "p2p", "nccl"};
    if (o.level != RunLevel::kQuick) gpu_ids.push_back("burn");
    if (scope == Scope::kGpu) {
        measure("gpu-bench", gpu_ids, true);
    } else if (snap.ok()) {
        stage("gpu-bench").reason = tree ? live_only : "no NVIDIA GPU on this machine";
    }
    // The loader reads --shards, or tokens generated for it in the data directory (or the temp
    // directory), removed when the stage ends.
    std::optional<SyntheticShard> synthetic;
    measure("data-path", {"tokenizer", "loader"}, false, [&](bench::BenchOptions& b) {
        if (!b.shards.empty() || listed(o.skip, "loader")) return Status{};
        const std::string parent =
            !b.data_dir.empty() ? b.data_dir : std::filesystem::temp_directory_path().string();
        auto shard =
            SyntheticShard::write(parent, synthetic_tokens(o.level), &CancelSignals::flag());
        if (!shard.ok()) return shard.status();
        synthetic.emplace(std::move(shard).value());
        b.shards = {synthetic->path()};
        return Status{};
    });
    synthetic.reset();
    measure("training", {"train"}, true);

    // The largest micro-batch of the reference model on the GPU, at standard and long: its own
    // supervised child (batch_probe_stage.h), its sizes measurements of the bench document.
    Stage& probe = stage("batch-probe");
    if (!snap.ok()) {
    } else if (!live) {
        probe.reason = live_only;
    } else if (scope != Scope::kGpu) {
        probe.reason = "no NVIDIA GPU on this machine";
    } else if (o.level == RunLevel::kQuick) {
        probe.reason = "runs at --level standard and long";
    } else if (skipped_by_user("batch-probe")) {
        probe.reason = "skipped with --skip";
    } else if (!o.gpus.empty() && std::find(o.gpus.begin(), o.gpus.end(), 0) == o.gpus.end()) {
        probe.reason = "--gpus leaves out GPU 0, the GPU the probe trains on";
    } else if (interrupted()) {
        probe.reason = "interrupted before it started";
    } else if (!hung.empty()) {
        probe.reason = "not run: the " + hung + " stage hung and was killed";
    } else {
        progress.start(probe);
        const auto t = Clock::now();
        const StageLimits limits = stage_limits(probe.budget_seconds, o.stage_timeout);
        const BatchProbeOutcome b = run_batch_probe_child(limits);
        probe.seconds = seconds_since(t);
        apply_batch_probe(probe, b, limits, run, items, hung);
    }

    Stage& w = stage("watch");
    if (watch) {
        watch->stop();
        w.seconds = seconds_since(t_watch);
        if (watch->absent()) {
            w.reason = "no NVIDIA driver: no GPU telemetry";
        } else if (!watch->problem().empty()) {
            w.state = StageState::kCouldNotRun;
            w.required = scope == Scope::kGpu;
            w.reason = watch->problem();
        } else {
            w.state = StageState::kRan;
            for (const auto& a : watch->alerts()) items.push_back(alert_item(a));
        }
        // No driver, no telemetry: the stage is skipped and the report has no watch section
        // (a count of ticks that read nothing is not GPU telemetry).
        if (!watch->absent()) {
            nlohmann::json alerts = nlohmann::json::array();
            for (const auto& a : watch->alerts())
                alerts.push_back(nlohmann::json::parse(watch::alert_json(a)));
            report["watch"] = {{"ticks", watch->ticks()},
                               {"problem", watch->problem()},
                               {"samples", watch->samples()},
                               {"alerts", alerts}};
            out.raw["raw/watch.json"] = report["watch"].dump(1) + "\n";
        }
    } else if (snap.ok()) {
        w.reason = !live                      ? live_only
                   : skipped_by_user("watch") ? "skipped with --skip"
                                              : "interrupted before it started";
    }
    if (live) {
        report["bench"] = bench::bench_document(run);
        out.raw["raw/bench.json"] = report["bench"].dump(1) + "\n";
    }

    if (scope == Scope::kGpu &&
        std::any_of(run.records.begin(), run.records.end(), bench::on_emulated_gpu))
        scope = Scope::kEmulated;
    out.incomplete = interrupted();
    out.outcome = judge(stages, items, scope, out.incomplete);
    const std::time_t finished = std::time(nullptr);
    nlohmann::json stage_docs = nlohmann::json::array(), item_docs = nlohmann::json::array();
    for (const auto& s : stages) stage_docs.push_back(stage_json(s));
    // Failures first, then what could not be judged, then warnings: the order people act in.
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        auto rank = [](Level l) { return l == Level::kFail ? 0 : l == Level::kUnknown ? 1 : 2; };
        return rank(a.level) < rank(b.level);
    });
    for (const auto& i : items) item_docs.push_back(item_json(i));
    report["verdict"] = verdict_name(out.outcome.verdict);
    report["verdict_line"] = out.outcome.line;
    report["scope"] = scope_name(scope);
    report["level"] = level_label(o.level);
    report["incomplete"] = out.incomplete;
    report["started_at"] = utc_iso8601(started);
    report["finished_at"] = utc_iso8601(finished);
    report["seconds"] = std::difftime(finished, started);
    report["command_line"] = o.argv;
    report["baseline"] = baseline_about;
    report["stages"] = stage_docs;
    report["items"] = item_docs;
    if (!report.contains("host")) report["host"] = nullptr;
    out.report = std::move(report);
    return out;
}

}  // namespace trainrig::validate

// validate's batch-probe stage (docs/report.md): on a GPU machine at `standard` and `long`,
// `trainrig train --find-batch --backend cuda --json` for the reference model in a supervised
// child, as the measuring stages run theirs (stage_child.h): a trial that crashes or hangs the
// GPU cannot take validate with it. Every size tried becomes measurements of the report's bench
// document: peak memory (plan's estimate beside it) and tokens/s; and the answer, the largest
// micro-batch, one more.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/supervised_child.h"
#include "measure/bench_document.h"
#include "validate/stage_child.h"
#include "validate/verdict.h"

namespace trainrig::validate {

// The shape it probes: GPT-2 124M at 1024 tokens, the reference training run's model.
inline constexpr const char* kBatchProbeModel = "gpt2";
inline constexpr int kBatchProbeSeq = 1024;
// Seconds the stage is budgeted: about ten sizes of a few steps each.
inline constexpr double kBatchProbeBudget = 60;

// The `trainrig` arguments (after the program) that run the probe.
std::vector<std::string> batch_probe_args();

struct BatchProbeOutcome {
    StageEnd end = StageEnd::kFailed;
    nlohmann::json doc;  // the trainrig.train.find_batch document, when one came
    std::string detail;  // kCrashed: the signal; kFailed: the child's error; kHung: left behind
};

// What a finished child's output means: pure, so every ending is tested without a child.
BatchProbeOutcome read_batch_probe_child(const Result<SupervisedRun>& child);

// The measurements of a trainrig.train.find_batch document, on GPU `gpu`: per size that ran,
// "peak-memory" (bytes; plan's estimate in params) and "tokens-per-s"; and "micro-batch".
std::vector<bench::BenchRecord> batch_probe_records(const nlohmann::json& doc, int gpu);

// Runs the probe in a child of this program and reads its outcome.
BatchProbeOutcome run_batch_probe_child(const StageLimits& limits);

// Applies an outcome to the stage: its state and reason, its measurements (into `run`), and
// its items (an error or a crash is unknown; nothing fitting even one sequence, a warning).
// Sets `hung` to the stage's name when the child had to be killed.
void apply_batch_probe(StageRecord& s, const BatchProbeOutcome& b, const StageLimits& limits,
                       bench::BenchRun& run, std::vector<Item>& items, std::string& hung);

}  // namespace trainrig::validate

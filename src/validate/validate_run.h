// `trainrig validate`: doctor → topology → host benchmarks → GPU benchmarks → the data path →
// a training run → the micro-batch probe, with watch sampling the GPUs through the
// measurements, judged into one verdict
// (validate/verdict.h) and one report document (docs/report.md). Pure orchestration: every
// judgement is the stage's own command's (doctor's rules, bench's expectations, watch's rules).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/report.h"
#include "probe/collect.h"
#include "validate/report_items.h"
#include "validate/verdict.h"

namespace trainrig::validate {

enum class RunLevel { kQuick, kStandard, kLong };
Result<RunLevel> level_from_name(const std::string& name);
const char* level_label(RunLevel l);  // "quick", "standard", "long"

struct ValidateOptions {
    RunLevel level = RunLevel::kQuick;
    CollectOptions collect;           // --root, --data-dir, --env-file, --timeout
    std::vector<int> gpus;            // --gpus; empty: all
    std::vector<std::string> skip;    // --skip: stages, doctor checks or areas, benchmarks
    int expect_gpus = -1;             // --expect-gpus
    std::string baseline;             // --baseline: an earlier report whose medians are expected
    double stage_timeout = 0;         // --stage-timeout: seconds; 0: 3 x a stage's budget + 60 s
    std::string tokenizer;            // --tokenizer: the data-path stage's tokenizer ...
    std::vector<std::string> inputs;  // --input: ... and the text it encodes
    std::vector<std::string> shards;  // --shards: the loader's tokens; none: generated ones
    bool progress = false;            // a line on stderr as each stage starts
    std::vector<std::string> argv;    // the command line, for the report
};

// The names --skip takes besides doctor check ids and areas and benchmark ids.
const std::vector<std::string>& stage_names();
// An error naming the first --skip value that is none of those.
Status check_skip(const std::vector<std::string>& skip);
// Every option as a run would judge it before it reads the machine: the level's name, --skip,
// --tokenizer with --input, --shards, and --baseline (read and parsed).
Status check_options(const ValidateOptions& options);

struct ValidateResult {
    Outcome outcome;
    bool incomplete = false;                 // interrupted: the report holds what ran until then
    nlohmann::json report;                   // trainrig.validate, without the command envelope
    std::map<std::string, std::string> raw;  // raw/… files of the report directory
};

// Fails only on bad input (an unreadable --root or --env-file); anything a stage cannot do is
// in the verdict.
Result<ValidateResult> run_validate(const ValidateOptions& options);

}  // namespace trainrig::validate

// `trainrig validate`: its stages (validate/stages/stage_list.h: doctor, topology, host and GPU
// benchmarks, the data path, a training run, the micro-batch probe, with watch sampling the GPUs
// through the measurements) run in order and are judged into one verdict (validate/verdict.h)
// and one report document (docs/report.md). Pure orchestration: every judgement is the stage's
// own command's (doctor's rules, bench's expectations, watch's rules).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validate/validate_options.h"
#include "validate/verdict.h"

namespace trainrig::validate {

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

// What `trainrig validate` is asked to do: the level and the options (docs/cli.md, "validate").
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "probe/collect.h"

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

}  // namespace trainrig::validate

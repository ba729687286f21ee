// From what the user typed to a model, a job, a machine and a target: names looked up in the
// catalogs, files read, sizes parsed, and one error sentence naming the flag when something
// is wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/hardware.h"
#include "plan/job.h"
#include "plan/model_spec.h"
#include "plan/search.h"

namespace trainrig::plan {

// Everything as typed; unset means "not given".
struct PlanOptions {
    std::optional<std::string> model, model_config;
    std::optional<int> layers, hidden, heads, kv_heads;
    std::optional<int64_t> ffn, vocab, max_positions;
    std::optional<std::string> ffn_type;
    std::optional<bool> tied;
    std::vector<std::string> catalogs;
    std::vector<std::string> gpu;  // one id, or several for --compare
    std::vector<int> gpu_count;    // one count, or several for --compare
    std::optional<int> gpus_per_node, nics_per_node;
    std::optional<std::string> intra, inter;
    std::optional<double> price;
    std::string mode = "full", precision = "bf16", optimizer = "adamw", recompute = "none";
    std::string convention = "zero", flash_attention = "on";
    std::optional<std::string> sequence_parallel;
    std::optional<int> zero;
    int tp = 1, pp = 1, lora_rank = 16;
    std::optional<std::string> lora_targets;
    int64_t micro_batch = 1;
    std::optional<int64_t> global_batch, grad_accum, seq;
    std::optional<std::string> tokens, dataset_tokens, target_tokens_per_s, deadline;
    std::optional<double> epochs, mfu;
    bool compare = false, minimum = false;
    std::string rank = "cost";
    int max_gpus = 4096;
};

struct PlanInputs {
    ModelSpec model;
    JobSpec job;
    HardwareCatalog catalog;
    SearchRequest search;  // machine, counts, batch, zero, target, rank
};

Result<PlanInputs> resolve_plan_options(const PlanOptions& o);
Result<ModelSpec> resolve_model(const PlanOptions& o);
Result<LoraTargets> parse_lora_targets(const std::string& text);

}  // namespace trainrig::plan

#include "plan/plan_inputs.h"

#include <fmt/format.h>

#include "core/text.h"
#include "core/user_file.h"
#include "plan/hf_config.h"
#include "plan/model_catalog.h"
#include "plan/quantities.h"

namespace trainrig::plan {

namespace {

template <class E>
Result<E> pick(const std::string& value, const char* option,
               std::initializer_list<std::pair<const char*, E>> choices) {
    std::string names;
    for (const auto& [name, e] : choices) {
        if (value == name) return e;
        names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return invalid_input(fmt::format("{} \"{}\" is not one of {}", option, value, names));
}

// Sizes stay far inside what 64-bit arithmetic holds, and far beyond any real job.
Status in_range(int64_t value, int64_t lo, int64_t hi, const char* option) {
    if (value < lo || value > hi)
        return invalid_input(fmt::format("{} {} is outside {}..{}", option, value, lo, hi));
    return ok_status();
}

Result<bool> on_off(const std::string& value, const char* option) {
    return pick<bool>(value, option, {{"on", true}, {"off", false}});
}

}  // namespace

Result<LoraTargets> parse_lora_targets(const std::string& text) {
    LoraTargets t{false, false, false, false, false, false, false};
    for (auto part : split(text, ',')) {
        part = trim(part);
        if (part == "all") {
            t = {true, true, true, true, true, true, true};
        } else if (part == "q" || part == "q_proj") {
            t.q = true;
        } else if (part == "k" || part == "k_proj") {
            t.k = true;
        } else if (part == "v" || part == "v_proj") {
            t.v = true;
        } else if (part == "o" || part == "o_proj") {
            t.o = true;
        } else if (part == "gate" || part == "gate_proj") {
            t.gate = true;
        } else if (part == "up" || part == "up_proj") {
            t.up = true;
        } else if (part == "down" || part == "down_proj") {
            t.down = true;
        } else {
            return invalid_input(
                fmt::format("--lora-targets: \"{}\" is not a projection (q, k, v, o, "
                            "gate, up, down or all)",
                            part));
        }
    }
    return t;
}

Result<ModelSpec> resolve_model(const PlanOptions& o) {
    if (o.model && o.model_config) return invalid_input("give --model or --model-config, not both");
    ModelSpec m;
    if (o.model) {
        auto found = find_model(*o.model);
        if (!found)
            return invalid_input(
                fmt::format("unknown model \"{}\" (known: {})", *o.model, model_ids()),
                "or give --model-config PATH with a Hugging Face config.json");
        m = *found;
    } else if (o.model_config) {
        auto text = read_user_file(*o.model_config, "--model-config", 1u << 20);
        if (!text) return text.status();
        auto read = model_from_hf_config(*text, *o.model_config);
        if (!read) return read.status();
        m = *read;
    } else {
        if (!o.layers || !o.hidden || !o.heads || !o.vocab)
            return invalid_input(
                "no model: give --model ID, --model-config PATH, or at least "
                "--layers, --hidden, --heads and --vocab");
        m.id = "custom";
        m.name = "custom model";
        m.source = "command line";
        m.ffn = 4LL * *o.hidden;
        m.ffn_type = FfnType::kGelu;
        m.norm = NormType::kLayerNorm;
    }
    // Explicit flags override whatever the catalog or file said.
    const bool heads_changed = o.heads.has_value() || o.hidden.has_value();
    const int old_heads = m.heads;
    if (o.layers) m.layers = *o.layers;
    if (o.hidden) m.hidden = *o.hidden;
    if (o.heads) m.heads = *o.heads;
    if (o.kv_heads)
        m.kv_heads = *o.kv_heads;
    else if (m.kv_heads == 0 || m.kv_heads == old_heads)
        m.kv_heads = m.heads;  // multi-head attention stays multi-head
    if (o.ffn) m.ffn = *o.ffn;
    if (o.vocab) m.vocab = *o.vocab;
    if (o.max_positions) m.max_positions = *o.max_positions;
    if (o.tied) m.tied_embeddings = *o.tied;
    if (o.ffn_type) {
        auto t = pick<FfnType>(*o.ffn_type, "--ffn-type",
                               {{"gelu", FfnType::kGelu}, {"swiglu", FfnType::kSwiglu}});
        if (!t) return t.status();
        m.ffn_type = *t;
    }
    if (heads_changed || m.head_dim == 0) {
        if (m.heads <= 0 || m.hidden % m.heads != 0)
            return invalid_input(
                fmt::format("--heads {} does not divide --hidden {}", m.heads, m.hidden));
        m.head_dim = m.hidden / m.heads;
    }
    if (o.layers || o.hidden || o.heads || o.kv_heads || o.ffn || o.vocab || o.ffn_type || o.tied)
        m.published_params = 0;  // no longer the published architecture
    TRAINRIG_TRY(validate_model(m, o.model          ? *o.model
                                   : o.model_config ? *o.model_config
                                                    : "model flags"));
    return m;
}

namespace {

// The built-in hardware catalog with each --catalog file merged over it, in order.
Status read_catalogs(const PlanOptions& o, HardwareCatalog& catalog) {
    catalog = builtin_hardware();
    for (const auto& path : o.catalogs) {
        auto text = read_user_file(path, "--catalog", 1u << 20);
        if (!text) return text.status();
        TRAINRIG_TRY(merge_hardware_toml(catalog, *text, path));
    }
    return ok_status();
}

// The job's named choices: mode, precision, optimizer, recompute, convention and the on/off
// switches.
Status resolve_job_choices(const PlanOptions& o, JobSpec& j) {
    auto mode = pick<Mode>(o.mode, "--mode",
                           {{"pretrain", Mode::kPretrain},
                            {"full", Mode::kFull},
                            {"lora", Mode::kLora},
                            {"qlora", Mode::kQlora}});
    if (!mode) return mode.status();
    j.mode = *mode;
    auto precision = pick<Precision>(o.precision, "--precision",
                                     {{"fp32", Precision::kFp32},
                                      {"tf32", Precision::kTf32},
                                      {"bf16", Precision::kBf16},
                                      {"fp16", Precision::kFp16},
                                      {"fp8", Precision::kFp8}});
    if (!precision) return precision.status();
    j.precision = *precision;
    auto optimizer = pick<Optimizer>(o.optimizer, "--optimizer",
                                     {{"adamw", Optimizer::kAdamW},
                                      {"adam8bit", Optimizer::kAdam8bit},
                                      {"sgd", Optimizer::kSgdMomentum}});
    if (!optimizer) return optimizer.status();
    j.optimizer = *optimizer;
    auto recompute = pick<Recompute>(o.recompute, "--recompute",
                                     {{"none", Recompute::kNone},
                                      {"selective", Recompute::kSelective},
                                      {"full", Recompute::kFull}});
    if (!recompute) return recompute.status();
    j.recompute = *recompute;
    auto convention = pick<Convention>(o.convention, "--convention",
                                       {{"zero", Convention::kZero},
                                        {"megatron", Convention::kMegatron},
                                        {"deepspeed", Convention::kDeepSpeed}});
    if (!convention) return convention.status();
    j.convention = *convention;
    auto flash = on_off(o.flash_attention, "--flash-attention");
    if (!flash) return flash.status();
    j.flash_attention = *flash;
    if (o.sequence_parallel) {
        auto sp = on_off(*o.sequence_parallel, "--sequence-parallel");
        if (!sp) return sp.status();
        j.sequence_parallel = *sp;
    }
    return ok_status();
}

// Every size option within its range, then the job's parallel degrees, batch, sequence, LoRA
// and MFU from them.
Status resolve_job_sizes(const PlanOptions& o, const ModelSpec& model, JobSpec& j) {
    if (o.zero && (*o.zero < 0 || *o.zero > 3))
        return invalid_input(fmt::format("--zero {} is not a stage 0-3", *o.zero));
    TRAINRIG_TRY(in_range(o.tp, 1, 100'000, "--tp"));
    TRAINRIG_TRY(in_range(o.pp, 1, 100'000, "--pp"));
    TRAINRIG_TRY(in_range(o.micro_batch, 1, 1'000'000, "--micro-batch"));
    if (o.global_batch) TRAINRIG_TRY(in_range(*o.global_batch, 1, 1'000'000'000, "--global-batch"));
    if (o.grad_accum) TRAINRIG_TRY(in_range(*o.grad_accum, 1, 1'000'000'000, "--grad-accum"));
    if (o.seq) TRAINRIG_TRY(in_range(*o.seq, 1, 1'000'000'000, "--seq"));
    TRAINRIG_TRY(in_range(o.lora_rank, 1, 1'000'000, "--lora-rank"));
    TRAINRIG_TRY(in_range(o.max_gpus, 1, 1'000'000, "--max-gpus"));
    if (o.gpus_per_node) TRAINRIG_TRY(in_range(*o.gpus_per_node, 1, 10'000, "--gpus-per-node"));
    if (o.nics_per_node) TRAINRIG_TRY(in_range(*o.nics_per_node, 1, 10'000, "--nics-per-node"));
    j.tp = o.tp;
    j.pp = o.pp;
    j.micro_batch = o.micro_batch;
    j.lora_rank = o.lora_rank;
    if (o.lora_targets) {
        auto targets = parse_lora_targets(*o.lora_targets);
        if (!targets) return targets.status();
        j.lora_targets = *targets;
    }
    j.seq = o.seq.value_or(model.max_positions > 0 ? std::min<int64_t>(model.max_positions, 4096)
                                                   : 2048);
    if (o.mfu) j.mfu = *o.mfu;
    if (o.global_batch && o.grad_accum)
        return invalid_input("give --global-batch or --grad-accum, not both");
    if (o.grad_accum) j.grad_accum = *o.grad_accum;
    return ok_status();
}

// The tokens to train on: --tokens, or --dataset-tokens times --epochs.
Status resolve_training_tokens(const PlanOptions& o, JobSpec& j) {
    if (o.tokens && o.dataset_tokens)
        return invalid_input("give --tokens or --dataset-tokens with --epochs, not both");
    // A training run's tokens: positive, and at most 1e16. The largest published runs read
    // 1.5e13 (Llama 3) to 3.6e13 (Qwen3) tokens; a thousand times that is a typo in the exponent,
    // whose "time to train" would be a number of days no one can read.
    constexpr double kMaxTokens = 1e16;
    const auto count = [&](const char* flag, const std::string& text,
                           const char* example) -> Result<double> {
        auto v = parse_count(text);
        if (!v)
            return invalid_input(
                fmt::format("{} \"{}\" is not a count such as {}", flag, text, example));
        if (*v <= 0)
            return invalid_input(
                fmt::format("{} \"{}\" is not a positive count such as {}", flag, text, example));
        return *v;
    };
    if (o.tokens) {
        auto v = count("--tokens", *o.tokens, "2e9 or 2B");
        if (!v) return v.status();
        j.tokens = *v;
    } else if (o.dataset_tokens) {
        auto v = count("--dataset-tokens", *o.dataset_tokens, "500M");
        if (!v) return v.status();
        if (o.epochs && *o.epochs <= 0)
            return invalid_input(fmt::format("--epochs {} must be positive", *o.epochs));
        j.tokens = *v * o.epochs.value_or(1.0);
    } else if (o.epochs) {
        return invalid_input("--epochs needs --dataset-tokens");
    }
    if (j.tokens > kMaxTokens)
        return invalid_input(
            fmt::format("{:.3g} training tokens is more than the 1e16 trainrig "
                        "plans for (the largest published runs read about "
                        "3.6e13); check the exponent",
                        j.tokens));
    return ok_status();
}

// What a search aims at and how it ranks what it finds: a throughput, a deadline, cost or time.
Status resolve_search_target(const PlanOptions& o, const JobSpec& j, SearchRequest& s) {
    if (o.target_tokens_per_s) {
        auto v = parse_count(*o.target_tokens_per_s);
        if (!v || *v <= 0)
            return invalid_input(fmt::format("--target-tokens-per-s \"{}\" is not a positive rate",
                                             *o.target_tokens_per_s));
        s.target.tokens_per_second = *v;
    }
    if (o.deadline) {
        auto v = parse_duration(*o.deadline);
        if (!v || *v <= 0)
            return invalid_input(
                fmt::format("--deadline \"{}\" is not a duration such as 72h or 3d", *o.deadline));
        if (j.tokens <= 0)
            return invalid_input(
                "--deadline needs --tokens (or --dataset-tokens) to know how much to train");
        s.target.deadline_seconds = *v;
    }
    auto rank = pick<Rank>(o.rank, "--rank", {{"cost", Rank::kCost}, {"time", Rank::kTime}});
    if (!rank) return rank.status();
    s.rank = *rank;
    s.zero = o.zero;
    s.global_batch = o.global_batch;
    s.max_gpus = o.max_gpus;
    return ok_status();
}

// The GPUs to plan for, their counts and the machine around them, checked against the catalog
// and against each other.
Status resolve_gpus(const PlanOptions& o, const HardwareCatalog& catalog, SearchRequest& s) {
    for (int n : o.gpu_count) {
        if (n < 1) return invalid_input(fmt::format("--gpu-count {}: at least 1 GPU is needed", n));
        TRAINRIG_TRY(in_range(n, 1, 1'000'000, "--gpu-count"));
    }
    // An unknown id is the first thing to say: "--gpu takes one id" about a list with a typo in
    // it sends the reader to the count instead.
    for (const auto& id : o.gpu)
        if (!catalog.gpu(id))
            return invalid_input(
                fmt::format("unknown GPU \"{}\" (known: {})", id, catalog.gpu_ids()),
                "add it with --catalog FILE");
    if (o.compare && o.minimum) return invalid_input("give --compare or --minimum, not both");
    if (!o.compare) {
        // No --gpu: the model's own figures and the GPUs it fits on (plan_command), unless a
        // count or --minimum asks about one GPU.
        if (o.gpu.empty() && (o.minimum || !o.gpu_count.empty()))
            return invalid_input(
                fmt::format("{} needs --gpu ID", o.minimum ? "--minimum" : "--gpu-count"),
                fmt::format("known: {}", catalog.gpu_ids()));
        if (o.gpu.size() > 1)
            return invalid_input("--gpu takes one id (several only with --compare)",
                                 fmt::format("known: {}", catalog.gpu_ids()));
        if (o.gpu_count.size() > 1)
            return invalid_input("--gpu-count takes one count (several only with --compare)");
        if (o.minimum && !o.gpu_count.empty())
            return invalid_input("--minimum searches the GPU count; drop --gpu-count");
    }
    s.gpu_ids = o.gpu;
    s.counts = o.gpu_count.empty() ? std::vector<int>{1, 2, 4, 8, 16, 32, 64} : o.gpu_count;
    s.machine.gpu = o.gpu.empty() ? std::string() : o.gpu.front();
    s.machine.gpus = o.gpu_count.empty() ? 1 : o.gpu_count.front();
    s.machine.gpus_per_node = o.gpus_per_node;
    s.machine.nics_per_node = o.nics_per_node;
    s.machine.intra = o.intra;
    s.machine.inter = o.inter;
    if (o.price && *o.price < 0) return invalid_input("--price cannot be negative");
    s.machine.usd_per_gpu_hour = o.price;
    return ok_status();
}

}  // namespace

Result<PlanInputs> resolve_plan_options(const PlanOptions& o) {
    PlanInputs in;
    auto model = resolve_model(o);
    if (!model) return model.status();
    in.model = *model;
    TRAINRIG_TRY(read_catalogs(o, in.catalog));
    TRAINRIG_TRY(resolve_job_choices(o, in.job));
    TRAINRIG_TRY(resolve_job_sizes(o, in.model, in.job));
    TRAINRIG_TRY(resolve_training_tokens(o, in.job));
    TRAINRIG_TRY(resolve_search_target(o, in.job, in.search));
    TRAINRIG_TRY(resolve_gpus(o, in.catalog, in.search));
    return in;
}

}  // namespace trainrig::plan

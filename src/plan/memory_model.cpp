#include "plan/memory_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "core/units.h"
#include "plan/flops.h"

namespace trainrig::plan {

namespace {

constexpr const char* kZeroPaper = "Rajbhandari et al. 2019 (arXiv:1910.02054) §3, §5";
constexpr const char* kKorthikantiMemory = "Korthikanti et al. 2022 (arXiv:2205.05198) §4, Table 2";
constexpr const char* kDeepSpeed =
    "DeepSpeed estimate_zero2/zero3_model_states_mem_needs (stage_1_and_2.py, stage3.py)";
// A bare PyTorch CUDA context with lazy module loading (CUDA >= 11.7): 300-430 MB measured
// (pytorch/pytorch#109888, unslothai/unsloth-zoo#1053: 426 MiB).
constexpr double kCudaContext = 426 * kMiB;
// NCCL buffers per communicator, measured on 4x A100 with PyTorch: 544 MB for 2 ranks, 688 MB
// for more (NVIDIA/nccl#964). NCCL_BUFFSIZE (4 MiB) x channels x peers is the source of it.
constexpr double kNcclPair = 544e6, kNcclGroup = 688e6;
// QLoRA NF4 with double quantization: 4 + 0.127 bits per parameter (Dettmers et al. 2023,
// arXiv:2305.14314 §3).
constexpr double kNf4Bytes = 4.127 / 8;

bool mixed(Precision p) { return p != Precision::kFp32 && p != Precision::kTf32; }
double act_elem_bytes(Precision p) { return mixed(p) ? 2 : 4; }
bool lora(const JobSpec& j) { return j.mode == Mode::kLora || j.mode == Mode::kQlora; }

}  // namespace

StateBytes state_bytes(const JobSpec& j) {
    StateBytes b;
    const bool mp = mixed(j.precision);
    // FP8 training (Transformer Engine) keeps 16-bit weights plus an FP8 copy for the GEMMs.
    b.weight = mp ? (j.precision == Precision::kFp8 ? 3 : 2) : 4;
    b.gradient = (mp && j.convention != Convention::kMegatron) ? 2 : 4;
    double states = 0;
    switch (j.optimizer) {
        case Optimizer::kAdamW:
            states = 8;
            break;  // m and v in fp32
        case Optimizer::kAdam8bit:
            states = 2;
            break;  // m and v in 8 bits (bitsandbytes)
        case Optimizer::kSgdMomentum:
            states = 4;
            break;  // momentum in fp32
    }
    b.optimizer = states + (mp ? 4 : 0);  // + the fp32 master copy in mixed precision
    return b;
}

std::vector<ActivationPart> layer_activation_parts(const ModelSpec& m, const JobSpec& j) {
    const double s = static_cast<double>(j.seq), b = static_cast<double>(j.micro_batch);
    const double h = m.hidden, e = act_elem_bytes(j.precision), t = j.tp;
    const double r = (j.sequence_parallel && j.tp > 1) ? t : 1;  // SP splits the rest too
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
    const double f = static_cast<double>(m.ffn), a = m.heads;
    if (j.recompute == Recompute::kFull)
        return {{"layer input, kept for recomputation", e * s * b * h / r}};
    std::vector<ActivationPart> parts = {
        {"norm inputs (2)", 2 * e * s * b * h / r},
        {"QKV projection input", e * s * b * h / r},
        {"MLP input", e * s * b * h / r},
    };
    if (m.dropout) parts.push_back({"residual dropout masks (2, 1 byte)", 2 * s * b * h / r});
    parts.push_back({"Q, K, V", e * s * b * (q + 2 * kv) / t});
    parts.push_back({"attention output (o_proj input)", e * s * b * q / t});
    if (m.ffn_type == FfnType::kSwiglu)
        parts.push_back({"gate, up and their product (down_proj input)", 3 * e * s * b * f / t});
    else
        parts.push_back({"GELU input and output", 2 * e * s * b * f / t});
    if (j.flash_attention) {
        parts.push_back({"softmax statistics (FlashAttention, fp32)", 4 * a * s * b / t});
    } else if (j.recompute != Recompute::kSelective) {
        parts.push_back({"attention scores after softmax", e * a * s * s * b / t});
        if (m.dropout)
            parts.push_back({"attention dropout mask and output", (1 + e) * a * s * s * b / t});
    }
    return parts;
}

double layer_activation_bytes(const ModelSpec& m, const JobSpec& j) {
    double sum = 0;
    for (const auto& p : layer_activation_parts(m, j)) sum += p.bytes;
    return sum;
}

double params_per_gpu(const ModelSpec& m, const ParamCounts& p, const JobSpec& j) {
    if (j.pp == 1) return static_cast<double>(p.total) / j.tp;
    // With pipelining the first stage holds the embeddings and the last the output layer (a
    // copy of the tied embedding in Megatron); the heavier of the two sets the per-GPU need.
    const double layers = std::ceil(static_cast<double>(m.layers) / j.pp);
    const double first = static_cast<double>(p.token_embedding + p.position_embedding);
    const double last = static_cast<double>(p.final_norm) +
                        static_cast<double>(m.tied_embeddings ? p.token_embedding : p.output_layer);
    return (layers * static_cast<double>(p.per_layer) + std::max(first, last)) / j.tp;
}

double zero_paper_model_states(double params, int stage, int dp, double k) {
    switch (stage) {
        case 0:
            return (2 + 2 + k) * params;
        case 1:
            return 4 * params + k * params / dp;
        case 2:
            return 2 * params + (2 + k) * params / dp;
        default:
            return (2 + 2 + k) * params / dp;
    }
}

double deepspeed_zero2_gpu_bytes(double params, int gpus) {
    return 2 * params + std::floor(18 * params / gpus);
}

double deepspeed_zero3_gpu_bytes(double params, double largest_layer_params, int gpus) {
    return 4 * largest_layer_params + std::floor(18 * params / gpus);
}

namespace {

// Records a term in bytes in the derivation when the caller keeps one; returns it either way.
struct BytesTerm {
    Derivation* d;
    double operator()(std::string id, std::string what, std::string formula, std::string subst,
                      double v, const char* source) const {
        if (d)
            d->add(std::move(id), std::move(what), std::move(formula), std::move(subst), v, "bytes",
                   source);
        return v;
    }
};

// DeepSpeed counts model states only, over all GPUs, without TP or PP.
void deepspeed_model_states(MemoryBreakdown& mem, const ModelSpec& m, const ParamCounts& p,
                            const Machine& machine, int zero, Derivation* d) {
    const BytesTerm add{d};
    // DeepSpeed's estimator takes the largest single module's own parameters, not the unit
    // FSDP/ZeRO-3 gathers.
    const double largest_module =
        std::max({static_cast<double>(m.vocab) * m.hidden,
                  static_cast<double>(m.hidden) * static_cast<double>(m.ffn),
                  static_cast<double>(m.hidden) * static_cast<double>(m.heads * m.head_dim)});
    const double total = static_cast<double>(p.total);
    if (zero == 2) {
        mem.weights = add("memory.weights", "16-bit weights (DeepSpeed ZeRO-2 estimator)", "2Ψ",
                          fmt::format("2 x {}", num(total)), 2 * total, kDeepSpeed);
        mem.optimizer =
            add("memory.optimizer", "gradients, fp32 copies and Adam states (estimator)", "18Ψ / N",
                fmt::format("18 x {} / {}", num(total), machine.gpus),
                std::floor(18 * total / machine.gpus), kDeepSpeed);
    } else {
        mem.optimizer = add("memory.optimizer", "model states (DeepSpeed ZeRO-3 estimator)",
                            "18Ψ / N", fmt::format("18 x {} / {}", num(total), machine.gpus),
                            std::floor(18 * total / machine.gpus), kDeepSpeed);
        mem.zero3_buffers =
            add("memory.zero3_buffers", "largest module, gathered (estimator)", "4 x largest_layer",
                fmt::format("4 x {}", num(largest_module)), 4 * largest_module, kDeepSpeed);
    }
}

// Weights, gradients, optimizer states and ZeRO-3's gathered buffers, as the ZeRO paper
// shards them over data parallelism (and TP and PP split them).
void zero_model_states(MemoryBreakdown& mem, const ModelSpec& m, const ParamCounts& p,
                       const JobSpec& j, int dp, int zero, Derivation* d) {
    const BytesTerm add{d};
    const double part = params_per_gpu(m, p, j);
    const double trainable =
        lora(j) ? static_cast<double>(lora_params(m, j.lora_rank, j.lora_targets)) / (j.tp * j.pp)
                : part;
    const double frozen = lora(j) ? part : 0;
    const double frozen_bytes =
        j.mode == Mode::kQlora ? kNf4Bytes : (mixed(j.precision) ? 2.0 : 4.0);
    const StateBytes sb = state_bytes(j);
    // The unit FSDP/ZeRO-3 gathers: a transformer block (FSDP wraps per block) or the
    // embedding, whichever is larger.
    const double largest =
        std::max(static_cast<double>(p.per_layer), static_cast<double>(m.vocab) * m.hidden) / j.tp;
    const double w_div = zero >= 3 ? dp : 1, g_div = zero >= 2 ? dp : 1, o_div = zero >= 1 ? dp : 1;
    const std::string stage = fmt::format("ZeRO-{}, DP {}", zero, dp);
    if (lora(j)) {
        mem.weights =
            add("memory.weights", "frozen base weights + adapters",
                fmt::format("(Ψ_base x {} + Ψ_lora x {}) / {}", num(frozen_bytes), sb.weight,
                            zero >= 3 ? "DP" : "1"),
                fmt::format("({} x {} + {} x {}) / {}", num(frozen), num(frozen_bytes),
                            num(trainable), sb.weight, num(w_div)),
                (frozen * frozen_bytes + trainable * sb.weight) / w_div,
                j.mode == Mode::kQlora ? "Dettmers et al. 2023 (arXiv:2305.14314) §3: NF4 with "
                                         "double quantization, 4.127 bits/param"
                                       : kZeroPaper);
    } else {
        mem.weights = add("memory.weights", "weights (" + stage + ")",
                          fmt::format("Ψ_gpu x {}{}", sb.weight, zero >= 3 ? " / DP" : ""),
                          fmt::format("{} x {} / {}", num(part), sb.weight, num(w_div)),
                          part * sb.weight / w_div, kZeroPaper);
    }
    mem.gradients = add("memory.gradients", "gradients (" + stage + ")",
                        fmt::format("Ψ_trainable x {}{}", sb.gradient, zero >= 2 ? " / DP" : ""),
                        fmt::format("{} x {} / {}", num(trainable), sb.gradient, num(g_div)),
                        trainable * sb.gradient / g_div,
                        j.convention == Convention::kMegatron
                            ? "Megatron-LM: fp32 main gradients (Narayanan et al. 2021)"
                            : kZeroPaper);
    mem.optimizer =
        add("memory.optimizer",
            fmt::format("optimizer states, {} ({})", optimizer_name(j.optimizer), stage),
            fmt::format("Ψ_trainable x {}{}", sb.optimizer, zero >= 1 ? " / DP" : ""),
            fmt::format("{} x {} / {}", num(trainable), sb.optimizer, num(o_div)),
            trainable * sb.optimizer / o_div, kZeroPaper);
    if (zero >= 3) {
        const double bytes = lora(j) ? frozen_bytes : sb.weight;
        mem.zero3_buffers = add(
            "memory.zero3_buffers", "gathered parameters: the unit in use and the prefetched one",
            "2 x max(layer, vocab x hidden) / TP x bytes",
            fmt::format("2 x {} x {}", num(largest), num(bytes)), 2 * largest * bytes,
            "FSDP/ZeRO-3 gather one wrapped unit at a time and prefetch the next");
    }
}

// Activations of the busiest pipeline stage: the first, with its micro-batches in flight, or the
// last, with the output layer's input and logits.
void activation_memory(MemoryBreakdown& mem, const ModelSpec& m, const JobSpec& j, Derivation* d) {
    const BytesTerm add{d};
    const double layer = layer_activation_bytes(m, j);
    const double layers_per_stage = std::ceil(static_cast<double>(m.layers) / j.pp);
    const double in_flight =
        j.pp > 1 ? static_cast<double>(std::min<int64_t>(j.pp, j.grad_accum)) : 1.0;
    double remat = 0;
    if (j.recompute == Recompute::kFull) {
        JobSpec none = j;
        none.recompute = Recompute::kNone;
        remat = layer_activation_bytes(m, none);
    }
    const double s = static_cast<double>(j.seq), b = static_cast<double>(j.micro_batch);
    const double r = (j.sequence_parallel && j.tp > 1) ? j.tp : 1;
    const double e = act_elem_bytes(j.precision);
    const double output =
        2 * e * s * b * m.hidden / r + 4 * s * b * static_cast<double>(m.vocab) / j.tp;
    if (d) {
        std::string parts, values;
        for (const auto& piece : layer_activation_parts(m, j)) {
            parts += (parts.empty() ? "" : " + ") + piece.what;
            values += (values.empty() ? "" : " + ") + gb(piece.bytes);
        }
        d->add("memory.activation_per_layer",
               fmt::format("activations of one layer, one micro-batch (s={}, b={}, TP={}{}, "
                           "recompute {}, flash attention {})",
                           j.seq, j.micro_batch, j.tp, r > 1 ? " with SP" : "",
                           recompute_name(j.recompute), j.flash_attention ? "on" : "off"),
               parts, values, layer, "bytes", kKorthikantiMemory);
    }
    const double first_stage = layers_per_stage * layer * in_flight + remat;
    const double last_stage = layers_per_stage * layer + remat;
    if (j.pp > 1 && first_stage > last_stage + output) {
        mem.activations = add("memory.activations", "activations on the first pipeline stage",
                              "ceil(L/PP) x layer x min(PP, micro-batches) (+ one layer rebuilt)",
                              fmt::format("{} x {} x {} + {}", num(layers_per_stage), gb(layer),
                                          num(in_flight), gb(remat)),
                              first_stage, kKorthikantiMemory);
    } else {
        mem.activations =
            add("memory.activations", "activations per GPU",
                "ceil(L/PP) x layer (+ one layer rebuilt under full recompute)",
                fmt::format("{} x {} + {}", num(layers_per_stage), gb(layer), gb(remat)),
                last_stage, kKorthikantiMemory);
        mem.logits = add("memory.logits", "output layer input and fp32 logits for the loss",
                         "2·e·s·b·h / SP + 4·s·b·V / TP",
                         fmt::format("2 x {} x {} x {} x {} / {} + 4 x {} x {} x {} / {}", e, s, b,
                                     m.hidden, r, s, b, m.vocab, j.tp),
                         output, "Korthikanti et al. 2022 §4.3 (output layer, cross entropy)");
    }
}

// What every GPU holds whatever the model: the CUDA context and one set of NCCL buffers per
// parallel dimension above 1.
void fixed_buffers(MemoryBreakdown& mem, const JobSpec& j, int dp, Derivation* d) {
    const BytesTerm add{d};
    mem.cuda_context = add("memory.cuda_context", "CUDA context (PyTorch, lazy loading)",
                           "a fixed size: a bare PyTorch context with lazy loading, as measured",
                           "426 x 2^20 bytes", kCudaContext,
                           "measured bare context: unslothai/unsloth-zoo#1053; pytorch#109888");
    double nccl = 0;
    std::vector<std::string> terms;  // "688 MB (DP 4)"
    for (const auto& [name, degree] : {std::pair{"DP", dp}, {"TP", j.tp}, {"PP", j.pp}})
        if (degree > 1) {
            nccl += degree == 2 ? kNcclPair : kNcclGroup;
            terms.push_back(
                fmt::format("{} ({} {})", gb(degree == 2 ? kNcclPair : kNcclGroup), name, degree));
        }
    mem.nccl =
        add("memory.nccl", "NCCL buffers (one communicator per parallel dimension > 1)",
            "544 MB per 2-rank, 688 MB per larger communicator",
            terms.empty() ? std::string("0 (no parallel dimension above 1)") : join(terms, " + "),
            nccl, "measured on 4x A100 (NVIDIA/nccl#964)");
}

}  // namespace

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParamCounts& p, const JobSpec& j,
                               const Machine& machine, int zero, Derivation* d) {
    MemoryBreakdown mem;
    mem.zero = zero;
    mem.capacity = machine.gpu.memory_bytes;
    const int dp = dp_degree(j, machine);
    if (j.convention == Convention::kDeepSpeed && zero >= 2 && !lora(j))
        deepspeed_model_states(mem, m, p, machine, zero, d);
    else
        zero_model_states(mem, m, p, j, dp, zero, d);
    activation_memory(mem, m, j, d);
    fixed_buffers(mem, j, dp, d);
    if (d)
        d->add("memory.total", fmt::format("memory per GPU, ZeRO-{}", zero),
               "weights + gradients + optimizer + buffers + activations + logits + context + NCCL",
               fmt::format("{} + {} + {} + {} + {} + {} + {} + {}", gb(mem.weights),
                           gb(mem.gradients), gb(mem.optimizer), gb(mem.zero3_buffers),
                           gb(mem.activations), gb(mem.logits), gb(mem.cuda_context), gb(mem.nccl)),
               mem.total(), "bytes", "sum of the above");
    return mem;
}

}  // namespace trainrig::plan

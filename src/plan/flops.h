// Training FLOPs. The planner's own count is PaLM's (Chowdhery et al. 2022, arXiv:2204.02311
// App. B): 6N + 12·L·H·Q·T per token, N the matmul parameters, split into forward (1/3) and
// backward (2/3); LoRA skips the frozen weights' gradients, recomputation repeats forward work.
// The published variants (Megatron's paper and code, llm.c) are here too, for comparison and
// for the tests that reproduce their numbers.
#pragma once

#include "plan/derivation.h"
#include "plan/job.h"
#include "plan/model_spec.h"

namespace trainrig::plan {

struct TokenFlops {
    double forward = 0;    // per token, model FLOPs
    double backward = 0;   // per token, model FLOPs
    double recompute = 0;  // per token, extra forward work recomputation executes
    double megatron = 0;   // per token, Megatron-LM's current count (causal halving), same job
    double model() const { return forward + backward; }
    double executed() const { return model() + recompute; }
};

// Trainable parameters of the LoRA adapters on every layer (rank r: r·(in + out) per matrix).
int64_t lora_params(const ModelSpec& m, int rank, const LoraTargets& t);

TokenFlops token_flops(const ModelSpec& m, const ParamCounts& p, const JobSpec& j, Derivation& d);

// PaLM App. B: 6N + 12·L·H·Q·T (full, non-causal attention).
double palm_flops_per_token(double matmul_params, int layers, int heads, int head_dim, int64_t seq);
// Narayanan et al. 2021 (arXiv:2104.04473) eq. 3, per iteration of batch B: 96·B·s·l·h²·
// (1 + s/6h + V/16lh) with full recomputation, 72·B·s·l·h²·(1 + s/6h + V/12lh) without.
double megatron_paper_flops_per_iteration(double batch, double seq, double layers, double hidden,
                                          double vocab, bool full_recompute);
// Megatron-LM `num_floating_point_operations` (megatron/training/training.py), per token:
// 12·L·h²·[(1 + g/a + s/2h)·(q/h) + (f/h)·(3/2 if SwiGLU) + V/(2·L·h)].
double megatron_code_flops_per_token(const ModelSpec& m, int64_t seq);
// llm.c `gpt2_estimate_mfu`: 6N + 6·L·C·T per token, N all parameters.
double llmc_flops_per_token(double params, int layers, int channels, int64_t seq);

}  // namespace trainrig::plan

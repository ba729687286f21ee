// Memory per GPU: model states (weights, gradients, optimizer) as ZeRO stage, parallel layout
// and convention shard them; activations from Korthikanti et al.'s per-layer accounting,
// generalised to grouped-query attention, SwiGLU and FlashAttention; the output layer's logits;
// and the fixed costs (CUDA context, NCCL buffers). Formulas and sources in docs/plan.md.
#pragma once

#include <string>
#include <vector>

#include "plan/derivation.h"
#include "plan/job.h"
#include "plan/model_spec.h"

namespace trainrig::plan {

struct MemoryBreakdown {
    int zero = 0;
    double weights = 0;
    double gradients = 0;
    double optimizer = 0;
    double zero3_buffers = 0;  // gathered parameters of the layer in use and the next one
    double activations = 0;
    double logits = 0;  // output layer input and fp32 logits for the loss
    double cuda_context = 0;
    double nccl = 0;
    double capacity = 0;  // the GPU's memory.total
    double model_states() const { return weights + gradients + optimizer; }
    double total() const {
        return model_states() + zero3_buffers + activations + logits + cuda_context + nccl;
    }
    double headroom() const { return capacity - total(); }
    // The memory a job may plan on: all of it but the margin.
    double usable() const { return capacity * (1 - kMemoryMargin); }
    // Fits with the margin kept free. A plan that needs more than usable() but not more than
    // capacity is "tight": it may start, and then fail on the allocator's fragmentation.
    bool fits() const { return total() <= usable(); }
    bool tight() const { return !fits() && total() <= capacity; }

    // The share of a GPU's memory no plan counts on: the PyTorch caching allocator rounds
    // blocks and fragments under a changing mix of sizes, and cuBLAS/NCCL workspaces grow
    // after the first steps (PyTorch docs, "CUDA semantics: memory management"; the
    // expandable_segments option exists to fight that fragmentation). A plan with less than
    // this free is not called fitting, and warnings and --minimum use the same figure.
    static constexpr double kMemoryMargin = 0.05;
};

// One transformer layer's stored activations for one micro-batch, as named parts (bytes).
struct ActivationPart {
    std::string what;
    double bytes = 0;
};
std::vector<ActivationPart> layer_activation_parts(const ModelSpec& m, const JobSpec& j);
double layer_activation_bytes(const ModelSpec& m, const JobSpec& j);

// Parameters one GPU holds before ZeRO sharding: its TP slice of the heaviest pipeline stage.
double params_per_gpu(const ModelSpec& m, const ParamCounts& p, const JobSpec& j);

// `d` may be null (the other ZeRO stages are computed without a derivation).
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParamCounts& p, const JobSpec& j,
                               const Machine& machine, int zero, Derivation* d);

// Model states per GPU in the ZeRO paper's terms (Rajbhandari et al. 2019, arXiv:1910.02054
// §5): (2 + 2 + K)·Ψ, K = 12 for mixed-precision Adam, sharded over N_d ranks by stage.
double zero_paper_model_states(double params, int stage, int dp, double k = 12);
// DeepSpeed's estimators without offload: ZeRO-2 2Ψ + 18Ψ/N (stage_1_and_2.py after #5099),
// ZeRO-3 4·largest_layer + 18Ψ/N (stage3.py).
double deepspeed_zero2_gpu_bytes(double params, int gpus);
double deepspeed_zero3_gpu_bytes(double params, double largest_layer_params, int gpus);

// Bytes a weight, a gradient and the optimizer keep per trainable parameter.
struct StateBytes {
    double weight = 0, gradient = 0, optimizer = 0;
};
StateBytes state_bytes(const JobSpec& j);

}  // namespace trainrig::plan

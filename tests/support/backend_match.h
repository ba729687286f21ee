// Judges a device training backend against the CPU reference: both start from the same weights,
// take the same batches for a few AdamW steps, and are compared on what bf16 compute may change
// a little and what a defect changes a lot. The GPU test (tests/gpu/train_cuda_test.cpp) runs it
// on the CUDA plugin; the unit test (tests/unit/train_device_match_test.cpp) runs it on a CPU
// emulation of the device path's bf16 rounding, which shows what the limits admit and catch.
// docs/gpu-check.md explains every limit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "train/backend.h"
#include "train/model_config.h"

namespace trainrig::train::testing {

// A GPT-2 shape, or with kv_heads > 0 a Llama one (RMSNorm, RoPE, grouped-query attention with
// heads / kv_heads query heads per key/value head, SwiGLU of width 8/3·C rounded up to 16, an
// untied head, no biases).
struct MatchShape {
    int layers, heads, channels, vocab, B, T;
    int kv_heads = 0;
};
// "hs32_T200" for GPT-2, "llama_hs64_G2_T200" for Llama: the head size, the query heads per
// key/value head and the sequence length, what the attention kernels specialise on.
std::string shape_name(const MatchShape& s);
ModelConfig config_of(const MatchShape& s);

// The GPT-2 shapes the GPU comparison runs: every head size the attention kernels are built for
// (16, 32, 64, 128), a sequence shorter than one 64-query tile, two that are not a multiple of
// it, and T = 1024 (16 tiles) at head sizes 64 and 128.
const std::vector<MatchShape>& device_match_shapes();
// The Llama shapes it runs: head size 32 without grouping (G1), 64 with two query heads per
// key/value head at T = 200 (not a multiple of the tile), 128 with G4 at T = 1024, and G8.
const std::vector<MatchShape>& llama_match_shapes();

// One comparison: the disagreement measured and the most it may be. NaN never passes.
struct MatchCheck {
    // "loss step 3", "logits step 1", "grad attn_proj_w", "k-bias grad / q,v-bias grad",
    // "grad-norm step 2", "update qkv_b (q, v)", "tight update fc_w"
    std::string name;
    double error = 0;
    double limit = 0;
    bool passed() const { return error <= limit; }
};

struct MatchReport {
    std::vector<MatchCheck> checks;
    bool passed() const;
    std::vector<MatchCheck> failures() const;
    // The check of that name, or null.
    const MatchCheck* find(std::string_view name) const;
    // The largest error / limit over the checks whose names start with `prefix`: below 1 passes,
    // and how far below is the margin.
    double worst_ratio(std::string_view prefix = "") const;
};

// The limits, as tests/support/match_limits.json gives them (scripts/gpu_check/llama_check.py
// reads the same file). bf16 keeps 8 significant bits (a rounding error of up to 2⁻⁸ ≈ 0.4 %);
// every GEMM reads bf16 inputs and accumulates in fp32, and activations are stored in bf16, so a
// correct device path lands well inside these (tests/unit/train_device_match_test.cpp measures
// by how much) while a wrong index, transpose or formula lands far outside.
struct MatchLimits {
    double loss = 0;       // relative, every step
    double logits = 0;     // relative L2 over the real vocabulary, first step
    double grads = 0;      // relative L2 per parameter tensor, first step
    double grad_norm = 0;  // relative, every step
    // Relative L2 of the parameter updates p − p₀ after the last step, every tensor:
    // update_limit(grads), which the file holds worked out.
    double updates = 0;
    // The weight matrices and embeddings (not initialised to zero, thousands of elements or
    // more, each moved a little) must also agree as closely as their own first-step gradients
    // did: update_limit(max(the tensor's gradient error, this)). The floor is bf16's largest
    // relative rounding error, 2⁻⁸: no gradient error below it is to be counted on. Biases and
    // LayerNorm parameters (one value per channel: too few for so tight a statistic; biases all
    // update, LayerNorm gains a few per mille of their value) are left to the limit above.
    double bf16_spacing = 0;
    // ‖K-bias gradient‖ over ‖Q- and V-bias gradient‖, first step: exactly 0 in exact
    // arithmetic (softmax ignores a constant added to every score of a row), a residue of
    // about 1e-5 with bf16 rounding; a broken softmax gradient makes it comparable to the others.
    double k_bias_grad = 0;
};
// tests/support/match_limits.json, compiled in.
MatchLimits default_match_limits();

// The limit on updates that follows from a relative gradient error of `grad_limit`. Adam's
// first steps move each element by about ±lr whatever its gradient's size, so an element
// whose gradient is smaller than its error can take the opposite step. For gradients and errors
// that are both roughly normal, the share of such elements is (2/π)·e for a relative error e,
// each off by 2·lr against an update of about lr: a relative L2 error of 2·√(2e/π) — 0.36 at
// the 5 % gradient limit. A wrong gradient gives about √2.
double update_limit(double grad_limit);

// Runs `steps` AdamW steps of one micro-batch each on both backends (init seed 3, batch seed 5,
// lr 1e-3) and measures every check. The K-bias slices of qkv_b are compared only by the
// k-bias check: their gradient is rounding residue, which Adam turns into full ±lr steps (any
// residue above its eps) in a direction nothing determines. An error is a backend call that failed.
Result<MatchReport> match_backends(Backend& device, Backend& reference, const MatchShape& shape,
                                   int steps = 4,
                                   const MatchLimits& limits = default_match_limits());

}  // namespace trainrig::train::testing

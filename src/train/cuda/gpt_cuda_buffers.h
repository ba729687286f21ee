// Every device buffer of GptCuda, carved from one allocation. One function lists them with
// their sizes; run without a base it only adds up the bytes, so what device_bytes() reports and
// what create() allocates cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/cuda/train_kernels.h"
#include "train/model_config.h"

namespace trainrig::train::cuda {

// One transformer block's forward activations, kept for backward. Row-major, N = B·T rows.
struct LayerActs {
    bf16* ln1 = nullptr;        // (N, C)
    float* ln1_mean = nullptr;  // (N)
    float* ln1_rstd = nullptr;  // (N)
    bf16* qkv = nullptr;        // (N, 3C)
    bf16* atty = nullptr;       // (N, C)
    float* lse = nullptr;       // (B, NH, T)
    bf16* res2 = nullptr;       // (N, C) residual stream after attention
    bf16* ln2 = nullptr;        // (N, C)
    float* ln2_mean = nullptr;  // (N)
    float* ln2_rstd = nullptr;  // (N)
    bf16* fch = nullptr;        // (N, 4C)
    bf16* fch_gelu = nullptr;   // (N, 4C)
    bf16* res3 = nullptr;       // (N, C) residual stream after the MLP: the block's output
};

struct DeviceBuffers {
    // Model state, each ParamLayout::total() elements in ParamLayout order.
    float* master = nullptr;  // fp32 weights AdamW updates
    bf16* params = nullptr;   // their bf16 copy the forward and backward read
    float* grads = nullptr;
    float* m = nullptr;
    float* v = nullptr;

    // Forward activations for the largest micro-batch.
    uint32_t* tokens = nullptr;   // (N) own copies, so backward does not need the caller's
    uint32_t* targets = nullptr;  // (N)
    bf16* encoded = nullptr;      // (N, C)
    std::vector<LayerActs> layers;
    bf16* lnf = nullptr;  // (N, C)
    float* lnf_mean = nullptr;
    float* lnf_rstd = nullptr;
    bf16* logits = nullptr;  // (N, Vp); backward turns them into their gradient
    float* losses = nullptr;
    float* row_lse = nullptr;

    // Backward scratch, shared by the layers.
    float* dres = nullptr;      // (N, C) gradient of the residual stream
    bf16* dres_bf16 = nullptr;  // (N, C) its bf16 copy, a GEMM input
    bf16* dbuf = nullptr;       // (N, 4C) the MLP's hidden gradient
    bf16* dqkv = nullptr;       // (N, 3C)
    bf16* datty = nullptr;      // (N, C)
    bf16* dln = nullptr;        // (N, C) gradient of a LayerNorm's output
    void* attention_scratch = nullptr;
    size_t attention_scratch_bytes = 0;
    double* partials = nullptr;  // kSumSquaresBlocks
    void* gemm_workspace = nullptr;
    size_t gemm_workspace_bytes = 0;

    size_t state_bytes = 0;  // the model state above, sub-buffer padding included
    size_t total_bytes = 0;  // everything: what the one allocation holds
};

// Lays the buffers out from `base` (256-byte aligned sub-buffers) for micro-batches up to B x T;
// with a null base only the byte counts are filled in.
DeviceBuffers carve_buffers(const ModelConfig& c, int B, int T, std::byte* base);

}  // namespace trainrig::train::cuda

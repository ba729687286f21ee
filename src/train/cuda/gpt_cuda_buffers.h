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
// QKV = C + 2·KVH·hd (3C for GPT-2); F = the MLP width (4C for GPT-2); FC = the MLP's first
// projection (F for GPT-2, gate | up = 2F for Llama). A buffer a family does not use is null.
struct LayerActs {
    bf16* ln1 = nullptr;        // (N, C)
    float* ln1_mean = nullptr;  // (N); null for RMSNorm
    float* ln1_rstd = nullptr;  // (N)
    bf16* qkv = nullptr;        // (N, QKV), q and k rotated for Llama
    bf16* atty = nullptr;       // (N, C)
    float* lse = nullptr;       // (B, NH, T)
    bf16* res2 = nullptr;       // (N, C) residual stream after attention
    bf16* ln2 = nullptr;        // (N, C)
    float* ln2_mean = nullptr;  // (N); null for RMSNorm
    float* ln2_rstd = nullptr;  // (N)
    bf16* fch = nullptr;        // (N, FC)
    bf16* fch_gelu = nullptr;   // (N, F) its activation: GELU, or SwiGLU's silu(gate)·up
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
    uint32_t* tokens = nullptr;       // (N) own copies, so backward does not need the caller's
    uint32_t* targets = nullptr;      // (N)
    uint32_t* token_order = nullptr;  // (N) row indices sorted by token (encoder_backward)
    bf16* encoded = nullptr;          // (N, C)
    std::vector<LayerActs> layers;
    bf16* lnf = nullptr;        // (N, C)
    float* lnf_mean = nullptr;  // null for RMSNorm
    float* lnf_rstd = nullptr;
    bf16* logits = nullptr;  // (N, Vp); backward turns them into their gradient
    float* losses = nullptr;
    float* row_lse = nullptr;

    // Backward scratch, shared by the layers.
    float* dres = nullptr;      // (N, C) gradient of the residual stream
    bf16* dres_bf16 = nullptr;  // (N, C) its bf16 copy, a GEMM input
    bf16* dbuf = nullptr;       // (N, FC) the gradient of the MLP's first projection's output
    bf16* dact = nullptr;       // (N, F) the gradient of SwiGLU's output; null for GPT-2, whose
                                // GELU backward runs in place in dbuf
    bf16* dqkv = nullptr;       // (N, QKV)
    bf16* datty = nullptr;      // (N, C)
    bf16* dln = nullptr;        // (N, C) gradient of a norm's output
    // RoPE's cos and sin, (rope_positions, hd/2) fp32 each; null for GPT-2. rope_positions is
    // min(max_seq, B·T): every sequence length a forward of at most B·T rows may take.
    float* rope_cos = nullptr;
    float* rope_sin = nullptr;
    int rope_positions = 0;
    float* column_scratch = nullptr;  // the column sums' (bias and norm weight gradients)
    void* attention_scratch = nullptr;
    size_t attention_scratch_bytes = 0;
    double* partials = nullptr;  // kSumSquaresBlocks
    void* gemm_workspace = nullptr;
    size_t gemm_workspace_bytes = 0;

    size_t state_bytes = 0;  // the model state above, sub-buffer padding included
    size_t total_bytes = 0;  // everything: what the one allocation holds
};

// Lays the buffers out from `base` (256-byte aligned sub-buffers) for micro-batches up to B x T;
// with a null base only the byte counts are filled in. A buffer of no elements is null.
DeviceBuffers carve_buffers(const ModelConfig& c, int B, int T, std::byte* base);

}  // namespace trainrig::train::cuda

// Causal self-attention for the CUDA backend, fused flash-style (Dao et al. 2022,
// FlashAttention-2's loop order): each block keeps a tile of queries in shared memory and walks
// the keys up to the diagonal with an online softmax, so no B·NH·T² matrix is stored; forward
// keeps each row's log-sum-exp and backward recomputes the probabilities from it. Multi-head
// (GPT-2) or grouped-query (Llama: KVH key/value heads, query head h reads head h / (NH/KVH)).
// Same layout as the CPU reference (src/train/cpu/ops.h): qkv (B, T, (NH + 2·KVH)·hs) as
// [q: NH heads | k: KVH heads | v: KVH heads], out (B, T, NH·hs), lse (B, NH, T) fp32; scale
// 1/sqrt(hs). With KVH = NH a qkv row is GPT-2's [q | k | v] of 3C.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {

// What attention's one-time setup (its raised shared-memory limits) was refused: the error, the
// kernel and the bytes asked for. error == cudaSuccess when all went through.
struct KernelSetupError {
    cudaError_t error = cudaSuccess;
    const char* kernel = "";
    size_t smem_bytes = 0;
};

// The head sizes the kernels are compiled for.
bool attention_supports_head_dim(int hs);

// Raises the kernels' shared-memory limits for head size hs (train/attention_smem.h: up to
// 111.5 KiB a block at 128). Once per process and device, before the first launch; a device that
// refuses says so here, naming the kernel, instead of failing the first launch with a generic
// error.
KernelSetupError attention_configure(int hs);

// NH query heads, KVH key/value heads (NH a multiple of KVH), head size hs.
void attention_forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T,
                       int NH, int KVH, int hs, cudaStream_t stream);

// Fp32 scratch backward needs: attention_backward_scratch_bytes(B, T, NH).
size_t attention_backward_scratch_bytes(int B, int T, int NH);
// dqkv (B, T, (NH + 2·KVH)·hs) is written (not accumulated), every element of it: a key/value
// head's dK and dV sum over the query heads that share it. out and lse are the forward's.
void attention_backward(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv,
                        const __nv_bfloat16* out, const float* lse, void* scratch, int B, int T,
                        int NH, int KVH, int hs, cudaStream_t stream);

}  // namespace trainrig::train::cuda

// Decoder-only transformer training on one CUDA device, GPT-2 or Llama blocks
// (model_config.h): bf16 weights and activations for compute, fp32 master weights, gradients and
// AdamW moments. The same model, parameter order (ParamLayout) and formulas as the CPU reference
// (src/train/cpu/gpt_cpu.h); GEMMs through cuBLASLt, attention fused (attention.h), the rest in
// train_kernels.h. All work is queued on one compute stream.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/status.h"
#include "train/model_config.h"
#include "train/optimizer.h"
#include "train/param_layout.h"

namespace trainrig::train::cuda {

class GptCuda {
public:
    // Device bytes create() allocates for this shape and micro-batch (parameters in both
    // precisions, gradients, moments, activations, backward scratch, GEMM workspace).
    static size_t device_bytes(const ModelConfig& c, int B, int T);

    // On the current device. Fails with one sentence (out of memory names needed vs free).
    static Result<std::unique_ptr<GptCuda>> create(const ModelConfig& c, const OptimizerConfig& opt,
                                                   int B, int T);
    ~GptCuda();
    GptCuda(const GptCuda&) = delete;
    GptCuda& operator=(const GptCuda&) = delete;

    const ModelConfig& config() const;
    const ParamLayout& layout() const;
    cudaStream_t stream() const;
    size_t allocated_bytes() const;

    // Host copies in ParamLayout order, layout().total() floats each. set_params also refreshes
    // the bf16 copy. Synchronous.
    Status set_params(const float* host);
    Status get_params(float* host) const;
    Status set_moments(const float* m, const float* v);
    Status get_moments(float* m, float* v) const;
    // The last forward's logits as fp32, rows = its B·T, each padded_vocab wide; fails once
    // backward has turned them into their gradient.
    Status get_logits(float* host, size_t rows) const;

    Status zero_grads();
    // B ≤ the B of create(), T ≤ its T. inputs, order (the rows stably sorted by input token,
    // TokenStaging's) and targets are device pointers (B·T each); targets may be null (no loss).
    // Waits for the GPU and returns the mean loss (0 without targets).
    Result<double> forward(const uint32_t* d_inputs, const uint32_t* d_order,
                           const uint32_t* d_targets, int B, int T);
    // Backward of the last forward with targets: grads += loss_scale · d(mean loss)/dθ.
    // layer_done(l) is called (on the host, in queue order) right after the work that completes
    // the gradients of layer l is queued, for l = L-1 down to 0, and last with l = -1 once the
    // embeddings' (wte, wpe), the final norm's and the classifier's gradients are queued. A hook
    // may queue work on other streams after recording an event on stream(). Returns without
    // waiting.
    Status backward(float loss_scale, const std::function<Status(int layer)>& layer_done);

    // Device fp32 gradients (layout().total()); valid after the queued work completes.
    float* grads();
    // Σ g² over all gradients, waiting for the GPU.
    Result<double> grad_sum_squares();
    // Clips by norm (as OptimizerConfig::grad_clip) and applies AdamW at lr, step t (1-based);
    // weight decay on matrices only. Returns without waiting.
    Status update(double lr, int64_t t, double norm);

private:
    struct Impl;
    explicit GptCuda(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace trainrig::train::cuda

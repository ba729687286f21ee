// GptCuda's state, shared by gpt_cuda.cpp (setup, forward, optimizer) and gpt_cuda_backward.cpp.
#pragma once

#include <optional>

#include "cuda/device_memory.h"
#include "train/cuda/gpt_cuda.h"
#include "train/cuda/gpt_cuda_buffers.h"
#include "train/cuda/lt_gemm.h"

namespace trainrig::train::cuda {

struct GptCuda::Impl {
    Impl(const ModelConfig& c, const OptimizerConfig& o, int batch, int seq)
        : config(c), opt(o), layout(c), max_B(batch), max_T(seq) {}
    // Queued work may still use the memory the members free.
    ~Impl() {
        if (stream.get() != nullptr) (void)trainrig::cuda::wait_stream(stream.get());
    }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    // Elements from the start of a ParamLayout-ordered buffer to layer l's slice of `p` (l = 0
    // for the tensors that are not per layer).
    size_t offset(Param p, int l = 0) const {
        const TensorSlot& s = layout[p];
        return s.offset + static_cast<size_t>(l) * (s.size / static_cast<size_t>(config.layers));
    }
    // Layer l's slice of a weight or of its gradient; null for a tensor the family does not have
    // (a bias of Llama, GPT-2's lm_head), which the GEMMs and kernels read as "none".
    const bf16* w(Param p, int l = 0) const {
        return layout[p].size ? buf.params + offset(p, l) : nullptr;
    }
    float* g(Param p, int l = 0) const {
        return layout[p].size ? buf.grads + offset(p, l) : nullptr;
    }
    bool llama() const { return config.arch == Arch::kLlama; }

    // The family's norm on N rows of layer l (l = 0 for the final one): LayerNorm with weight wp
    // and bias bp (GPT-2), or RMSNorm with gain wp (Llama; mean and bp unused). Forward is in
    // gpt_cuda.cpp, backward (dinp += the input gradient) in gpt_cuda_backward.cpp.
    void norm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, Param wp, Param bp,
                      int l, int N, cudaStream_t s) const;
    void norm_backward(float* dinp, const bf16* dout, const bf16* inp, Param wp, Param bp, int l,
                       const float* mean, const float* rstd, int N, cudaStream_t s) const;

    ModelConfig config;
    OptimizerConfig opt;
    ParamLayout layout;
    int max_B, max_T;

    trainrig::cuda::DeviceMemory memory;  // the one allocation DeviceBuffers points into
    DeviceBuffers buf;
    trainrig::cuda::PinnedMemory host;  // the loss rows and the sum-of-squares partials
    float* host_losses = nullptr;
    double* host_partials = nullptr;
    trainrig::cuda::Stream stream;
    std::optional<LtGemm> gemm;

    // The micro-batch of the last forward, and whether backward may consume it: it needs the
    // targets, and it overwrites the logits.
    int B = 0, T = 0;
    bool backward_ready = false;
    size_t logits_rows = 0;  // of the last forward; 0 once backward has consumed them
};

}  // namespace trainrig::train::cuda

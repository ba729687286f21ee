// The CUDA backend's arithmetic emulated on the CPU, to learn what bf16 compute does to the
// comparison against the CPU reference (backend_match.h) without a GPU. It follows the device
// path of src/train/cuda/gpt_cuda.cpp and gpt_cuda_backward.cpp step for step and rounds to
// bf16 (round to nearest even) every value the device stores in bf16: the weights the passes
// read (from fp32 master weights), every activation, the logits and their gradient, the GEMM
// inputs of backward, the attention probabilities and score gradients where they enter the
// tensor-core products (attention.cu). Sums, statistics, the residual-stream gradient, weight
// gradients and AdamW stay fp32, as there. The order of the kernels' fp32 sums (tiles, the
// online softmax) is not reproduced: that moves results by fp32 rounding, far below bf16's.
//
// A fault can be planted, to show that the comparison catches it.
#pragma once

#include <memory>

#include "train/backend.h"

namespace trainrig::train::testing {

enum class DeviceFault {
    kNone,
    // Each layer's attention-projection weight gradient transposed: a swapped GEMM operand.
    kTransposedAttnProjGrad,
    // AdamW without bias correction (c1 = c2 = 1): loss, logits and gradients of the first
    // step are untouched; only where the steps lead shows it.
    kNoAdamBiasCorrection,
};

std::unique_ptr<Backend> make_bf16_device_backend(const ModelConfig& config,
                                                  const OptimizerConfig& opt,
                                                  DeviceFault fault = DeviceFault::kNone);

// x rounded to the nearest bf16 (ties to even), as __float2bfloat16 does; NaN and ±inf as is.
float round_bf16(float x);

}  // namespace trainrig::train::testing

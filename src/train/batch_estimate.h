// plan's memory estimate of a training run at micro-batch B, as the micro-batch search uses it:
// to choose the first size to try and to compare with what each size measured. The estimate is
// plan's memory model (plan/memory_model.h) on the shape train builds (model_spec_bridge.h),
// in the precision the backend trains in:
//   cpu:    fp32 weights, gradients and two AdamW moments (16 bytes per parameter), fp32
//           activations;
//   device: bf16 weights and activations with fp32 master weights, fp32 gradients and fp32
//           moments (18 bytes per parameter: plan's Megatron convention, which is what the
//           CUDA backend keeps).
// One process, so data parallelism and the ZeRO stage do not divide the model states.
#pragma once

#include <cstdint>
#include <string>

#include "plan/job.h"
#include "train/model_config.h"

namespace trainrig::train {

struct EstimateBasis {
    plan::Precision precision = plan::Precision::kFp32;
    plan::Convention convention = plan::Convention::kZero;
    int zero = 0;
    bool device = false;  // plan's fixed costs (CUDA context, NCCL) apply
    // Where it comes from, in words: "plan's memory model: fp32, AdamW, ZeRO-0, one process".
    std::string describe() const;
};

// The basis for a backend: "cpu", or a device backend ("cuda").
EstimateBasis estimate_basis(const std::string& backend);

struct MemoryEstimate {
    uint64_t model_bytes = 0;  // model states + activations + logits: what the trial measures
    uint64_t fixed_bytes = 0;  // plan's fixed costs (CUDA context, NCCL), outside the trial's
                               // measurement and its capacity; 0 on the CPU
    uint64_t parameters = 0;   // plan's count (the unpadded vocabulary)
};

MemoryEstimate estimate_memory(const ModelConfig& model, int seq, int batch,
                               const EstimateBasis& basis);

}  // namespace trainrig::train

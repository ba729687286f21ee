#include "train/batch_estimate.h"

#include <fmt/format.h>

#include <cmath>

#include "plan/memory_model.h"
#include "plan/model_spec.h"
#include "train/model_spec_bridge.h"

namespace trainrig::train {

std::string EstimateBasis::describe() const {
    return fmt::format("plan's memory model: {}{}, AdamW, ZeRO-{}, one process",
                       plan::precision_name(precision),
                       convention == plan::Convention::kMegatron ? " (fp32 gradients)" : "", zero);
}

EstimateBasis estimate_basis(const std::string& backend) {
    EstimateBasis b;
    if (backend != "cpu") {
        b.precision = plan::Precision::kBf16;
        b.convention = plan::Convention::kMegatron;
        b.device = true;
    }
    return b;
}

MemoryEstimate estimate_memory(const ModelConfig& model, int seq, int batch,
                               const EstimateBasis& basis) {
    const plan::ModelSpec spec = model_spec_of(model);
    const plan::ParamCounts counts = plan::count_params(spec);
    plan::JobSpec job;
    job.mode = plan::Mode::kPretrain;
    job.precision = basis.precision;
    job.convention = basis.convention;
    job.zero = basis.zero;
    job.flash_attention = true;  // both backends keep each row's log-sum-exp, not the T² scores
    job.micro_batch = batch;
    job.seq = seq;
    plan::Machine machine;
    machine.gpus = 1;
    machine.gpus_per_node = 1;
    const plan::MemoryBreakdown m =
        plan::memory_per_gpu(spec, counts, job, machine, basis.zero, nullptr);
    MemoryEstimate e;
    e.model_bytes = static_cast<uint64_t>(
        std::llround(m.model_states() + m.zero3_buffers + m.activations + m.logits));
    e.fixed_bytes = basis.device ? static_cast<uint64_t>(std::llround(m.cuda_context + m.nccl)) : 0;
    e.parameters = static_cast<uint64_t>(counts.total);
    return e;
}

}  // namespace trainrig::train

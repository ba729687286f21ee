// What is being trained and how: the training mode, precision, optimizer, sharding,
// recomputation, parallel layout and batch; and the machine it runs on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/hardware.h"

namespace trainrig::plan {

enum class Mode { kPretrain, kFull, kLora, kQlora };
enum class Optimizer { kAdamW, kAdam8bit, kSgdMomentum };
enum class Recompute { kNone, kSelective, kFull };
// How model states are counted: the ZeRO paper (16 B/param for mixed-precision Adam), Megatron
// (fp32 gradients: 18 B/param), or DeepSpeed's own estimator functions.
enum class Convention { kZero, kMegatron, kDeepSpeed };

// LoRA adapters on these projections of every layer (q, k, v, o, gate, up, down).
struct LoraTargets {
    bool q = true, k = false, v = true, o = false, gate = false, up = false, down = false;
};

struct JobSpec {
    Mode mode = Mode::kFull;
    Precision precision = Precision::kBf16;
    Optimizer optimizer = Optimizer::kAdamW;
    Convention convention = Convention::kZero;
    int zero = 0;  // 0..3; FSDP FULL_SHARD is 3, SHARD_GRAD_OP is 2
    Recompute recompute = Recompute::kNone;
    bool flash_attention = true;
    bool sequence_parallel = true;  // with tp > 1 (Megatron-LM --sequence-parallel)
    int tp = 1, pp = 1;
    int64_t micro_batch = 1;  // sequences per GPU per micro-step
    int64_t grad_accum = 1;   // micro-steps per optimizer step
    int64_t seq = 2048;
    int lora_rank = 16;
    LoraTargets lora_targets;
    double mfu = 0.45;  // fraction of peak the math runs at (see docs/plan.md)
    double tokens = 0;  // tokens to train; 0 = per-step figures only
};

struct Machine {
    GpuSpec gpu;
    int gpus = 1;
    int gpus_per_node = 8;
    int nics_per_node = 8;
    LinkSpec intra;
    LinkSpec inter;
    int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

// Data-parallel degree: GPUs / (TP x PP).
inline int dp_degree(const JobSpec& j, const Machine& m) { return m.gpus / (j.tp * j.pp); }
inline int64_t global_batch(const JobSpec& j, const Machine& m) {
    return j.micro_batch * j.grad_accum * dp_degree(j, m);
}

const char* mode_name(Mode m);
const char* optimizer_name(Optimizer o);
const char* recompute_name(Recompute r);
const char* convention_name(Convention c);
std::string lora_targets_text(const LoraTargets& t);

}  // namespace trainrig::plan

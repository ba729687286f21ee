// The training loop: data, forward/backward with gradient accumulation, all-reduce, AdamW,
// evaluation, checkpoints and exact resume, per-phase timing, and the stops (NaN/Inf, Ctrl-C).
// Backend-agnostic: the backend owns the math, the loop owns the order of things.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "train/backend.h"
#include "train/communicator.h"
#include "train/model_config.h"
#include "train/optimizer.h"
#include "train/step_record.h"

namespace trainrig::train {

struct TrainOptions {
    std::vector<std::string> data, val_data;  // TokenCorpus paths (Megatron prefixes, llm.c shards)
    ModelConfig model;
    int seq = 1024;       // T
    int batch = 4;        // B, per rank per micro-step
    int grad_accum = 1;   // micro-steps per update
    int64_t steps = 0;    // total updates, including those before a resume
    int64_t stop_at = 0;  // >0: stop (with a checkpoint) after this step; the schedule still
                          // runs to `steps` (time-sliced jobs, and the exact-resume check)
    OptimizerConfig opt;
    uint64_t seed = 1337;
    std::string backend = "cpu";
    std::string device;      // the device backend's GPU name; empty on the CPU
    std::string init_from;   // Hugging Face safetensors weights to start from (fine-tuning)
    std::string ckpt_dir;    // empty: no checkpoints
    int64_t ckpt_every = 0;  // 0: only at the end
    int keep = 2;
    bool resume = false;
    bool extend = false;    // --resume with a larger --steps continues on the longer schedule
    int64_t val_every = 0;  // 0: only before the first and after the last step
    int val_batches = 8;
    std::string log_path;   // JSON lines, appended
    double peak_flops = 0;  // per device; 0 = unknown (no MFU)
    std::string peak_source;
    std::function<void(const StepRecord&)> on_step;  // rank 0 only
    // Makes the backend for --backend other than cpu (the command loads the device plugin);
    // null: the CPU backend.
    std::function<Result<std::unique_ptr<Backend>>(const ModelConfig&, const OptimizerConfig&,
                                                   int batch, int seq)>
        make_backend;
};

enum class StopReason { kCompleted, kStoppedAt, kNothingToDo, kNonFinite, kInterrupted };
const char* stop_reason_name(StopReason r);

struct TrainSummary {
    StopReason stop = StopReason::kCompleted;
    std::string message;  // for kNonFinite: what diverged and the checkpoint to go back to
    int world = 1;
    int64_t start_step = 0;  // 0, or the resumed checkpoint's step
    int64_t end_step = 0;
    std::string resumed_from;
    std::vector<std::string> skipped_checkpoints;  // damaged ones passed over on resume
    double first_loss = 0, last_loss = 0;
    std::optional<double> first_val_loss, last_val_loss;
    double tokens_per_s = 0;  // median over timed steps (the first step of a process is excluded)
    double step_s = 0;        // median
    PhaseTimes median_time;
    // What timed forward, backward, comm and optimizer: "host" clocks around calls that finish
    // before they return (CPU), or "device" events where the calls only queue work (CUDA).
    std::string phase_clock = "host";
    double flops_per_token = 0;
    std::optional<double> mfu;
    uint64_t peak_memory_bytes = 0;
    uint64_t model_params = 0;
    std::string last_checkpoint;
    std::optional<bool> replicas_identical;  // checked at the end when there are several ranks
    double wall_s = 0;
};

// Checks every option (shapes, hyper-parameters, the checkpoint folder --resume names) without
// reading the machine: the command line's check before anything runs.
Status validate_options(const TrainOptions& o);
// Those, then what this machine allows (the backend, memory) before anything is read or written.
Status validate(const TrainOptions& o);

Result<TrainSummary> run_training(const TrainOptions& o, Communicator& comm);

}  // namespace trainrig::train

// What one optimizer step measured, as a line of the --log file (JSON) and as the live status
// line on a terminal. The JSON field names are a contract (docs/formats.md, trainrig.train.step).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "train/model_config.h"

namespace trainrig::train {

// Seconds. forward/backward sum over the step's micro-batches; comm is the gradient
// all-reduce not hidden behind compute; checkpoint is the training stall of a save (the copy);
// eval is the validation pass, which is part of total but not of the training throughput.
struct PhaseTimes {
    double data_wait = 0, forward = 0, backward = 0, comm = 0, optimizer = 0, checkpoint = 0;
    double eval = 0;
    double total = 0;
};

struct StepRecord {
    int64_t step = 0;   // updates completed, 1-based
    int64_t steps = 0;  // the run's total
    double loss = 0;    // mean over the step's tokens on all ranks
    double lr = 0;
    double grad_norm = 0;       // before clipping
    uint64_t tokens = 0;        // in this step, all ranks
    double tokens_per_s = 0;    // tokens / (total - eval)
    double flops_per_s = 0;     // model FLOPs (PaLM count), all ranks
    std::optional<double> mfu;  // when the device's peak is known
    PhaseTimes time;
    uint64_t memory_bytes = 0;  // peak, this rank
    std::optional<double> val_loss;
    std::string checkpoint;  // folder saved after this step, if any
};

// Model FLOPs per trained token: PaLM's 6N + 12·L·H·Q·T (arXiv:2204.02311 App. B), N the
// matmul parameters (ParamLayout::matmul_params), T the sequence length.
double train_flops_per_token(const ModelConfig& c, int seq);

std::string step_json(const StepRecord& r);
std::string status_line(const StepRecord& r);

}  // namespace trainrig::train

// The planner: one job on one machine, every number derived (and explained) from the model,
// the job and the hardware. This is the entry point other parts reuse with the same ModelSpec
// (a test against measured training memory will call make_plan for the reference model).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/derivation.h"
#include "plan/flops.h"
#include "plan/job.h"
#include "plan/memory_model.h"
#include "plan/model_spec.h"

namespace trainrig::plan {

struct CommPlan {
    double dp_bytes_per_step = 0;  // sent per GPU, after the nccl-tests factor
    double tp_bytes_per_step = 0;
    double pp_bytes_per_step = 0;
    double dp_busbw = 0, tp_busbw = 0, pp_bandwidth = 0;
    std::string dp_over, tp_over, pp_over;
    double dp_seconds = 0;         // all DP collectives of a step
    double dp_overlap_window = 0;  // compute they can hide under
    std::string dp_window_what;    // which compute: "the last micro-step's backward"
    double dp_after_step = 0;      // of dp_seconds, what runs after the step (ZeRO-1/2's gather)
    double dp_exposed = 0;         // what does not hide, dp_after_step included
    double tp_seconds = 0;         // per step, on the critical path
    double pp_seconds = 0;         // per step, on the critical path
};

struct TimePlan {
    double forward_per_micro = 0, backward_per_micro = 0;  // per GPU, recompute in backward
    double pipeline = 0;  // all micro-steps, bubble and TP/PP traffic included
    double bubble = 0;
    double optimizer = 0;  // the optimizer step, memory-bound
    double step = 0;
    double tokens_per_second = 0;
    double mfu = 0;  // end to end: model FLOPs / (step x GPUs x peak)
    double steps = 0, seconds = 0, gpu_hours = 0, energy_kwh = 0, cost_usd = 0;
};

struct Plan {
    ModelSpec model;
    ParamCounts params;
    int64_t trainable = 0;
    JobSpec job;
    Machine machine;
    int dp = 1;
    double tokens_per_step = 0;
    TokenFlops flops;
    double flops_per_step = 0;                 // model FLOPs
    std::vector<MemoryBreakdown> zero_stages;  // 0..3, for the fit verdicts
    MemoryBreakdown memory;                    // the chosen stage
    bool zero_chosen = false;  // picked by the planner: the fastest stage that fits, the most
                               // headroom among those within 1 % of it
    CommPlan comm;
    TimePlan time;
    std::vector<std::string> warnings;
    Derivation derivation;
};

// Parallel layout, sizes and precision against the model and GPU: one error sentence.
Status validate_job(const ModelSpec& m, const JobSpec& j, const Machine& machine);

// `zero`: the stage to plan; none = the fastest stage that fits, the most headroom among those
// within 1 % of it (stage 3 when none fits, 0 without data parallelism).
Result<Plan> make_plan(const ModelSpec& m, const JobSpec& j, const Machine& machine,
                       std::optional<int> zero);

}  // namespace trainrig::plan

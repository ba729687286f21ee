// Many machines for one job: `--compare` (GPU types x counts, ranked by time or cost) and
// `--minimum` (the fewest GPUs of one type that fit and meet the target).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/hardware.h"
#include "plan/planner.h"

namespace trainrig::plan {

// What the user fixed about the machine; the rest comes from the GPU's catalog entry.
struct MachineRequest {
    std::string gpu;
    int gpus = 1;
    std::optional<int> gpus_per_node, nics_per_node;
    std::optional<std::string> intra, inter;
    std::optional<double> usd_per_gpu_hour;
};
Result<Machine> make_machine(const HardwareCatalog& catalog, const MachineRequest& request);

// Sets grad_accum so that micro-batch x accumulation x DP = the global batch (sequences).
Status fit_global_batch(JobSpec& job, const Machine& machine, int64_t global_batch);

struct Target {
    double tokens_per_second = 0;  // 0 = none
    double deadline_seconds = 0;   // 0 = none; needs tokens to train
    bool any() const { return tokens_per_second > 0 || deadline_seconds > 0; }
};
bool meets_target(const Plan& plan, const Target& target);
// USD per million tokens trained, 0 when the price is unknown.
double usd_per_million_tokens(const Plan& plan);

enum class Rank { kTime, kCost };

struct Candidate {
    std::string gpu;
    int gpus = 0;
    std::optional<Plan> plan;  // absent when the job cannot run there
    std::string why_not;       // then: the reason
};

struct SearchRequest {
    MachineRequest machine;            // gpu and gpus are varied
    std::vector<std::string> gpu_ids;  // --compare: empty = the whole catalog
    std::vector<int> counts;           // --compare: GPU counts to try
    std::optional<int64_t> global_batch;
    std::optional<int> zero;  // fixed stage, or the lowest that fits
    Target target;
    Rank rank = Rank::kCost;
    int max_gpus = 4096;  // --minimum search limit
    // --minimum: what it may change besides the count (what the user did not fix): the TP
    // degree within a node, the PP degree, activation recomputation. The ZeRO stage is always
    // the lowest that fits unless --zero fixes it.
    bool vary_tp = false, vary_pp = false, vary_recompute = false;
};

// Every (GPU, count) pair; the ones that fit and run first, ranked; then the rest.
std::vector<Candidate> compare_machines(const ModelSpec& m, const JobSpec& job,
                                        const HardwareCatalog& catalog, const SearchRequest& r);
// The fewest GPUs of r.machine.gpu that fit and meet r.target; none when no count up to
// r.max_gpus does, with the constraint that binds in why_not. Each count tries every layout
// r allows to vary (TP within a node, PP, recompute; ZeRO the lowest that fits) and keeps the
// fastest that fits. Counts go one by one inside a node, by whole nodes beyond it.
std::optional<Plan> minimum_gpus(const ModelSpec& m, const JobSpec& job,
                                 const HardwareCatalog& catalog, const SearchRequest& r,
                                 std::string& why_not);

}  // namespace trainrig::plan

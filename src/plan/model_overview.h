// `trainrig plan --model X` with no GPU named: the model's own figures (parameters, FLOPs per
// token, its model states and what each ZeRO stage divides) and, for every GPU of the catalog,
// the fewest of them the job fits on.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/search.h"

namespace trainrig::plan {

struct GpuFit {
    std::string gpu;           // catalog id
    std::optional<Plan> plan;  // the fewest GPUs that fit (minimum_gpus), if any count does
    std::string why_not;       // otherwise: the constraint that binds
};

struct ModelOverview {
    ModelSpec model;
    JobSpec job;
    ParamCounts params;
    TokenFlops flops;
    MemoryBreakdown states;  // everything on one GPU without ZeRO: weights, gradients, optimizer
    std::vector<GpuFit> fits;
    bool any_fits() const;
};

// `r` as resolved from the command line; its GPU is set to each catalog entry in turn. What
// the user fixed (TP, PP, recompute, ZeRO stage, a throughput target) stays fixed.
ModelOverview model_overview(const ModelSpec& m, const JobSpec& job, const HardwareCatalog& catalog,
                             const SearchRequest& r);
std::string render_model_overview(const ModelOverview& o);
nlohmann::json model_overview_json(const ModelOverview& o);

}  // namespace trainrig::plan

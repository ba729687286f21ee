// The topology stage: the GPU/NIC/NUMA matrix (`trainrig topo`) of the snapshot the doctor stage
// read, as the report's "topology" section.
#include "topo/gpu_matrix.h"
#include "topo/render_topo.h"
#include "validate/stages/stage.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

class TopologyStage final : public Stage {
public:
    const char* id() const override { return "topology"; }
    const char* title() const override { return "topology"; }
    double budget_seconds(RunLevel) const override { return 1; }

    std::optional<Skip> applies(const RunContext& ctx) const override {
        if (!ctx.snapshot || RunContext::interrupted()) return Skip{};
        if (ctx.skipped_by_user(id())) return Skip{kSkippedByUser, StageState::kSkipped, true};
        return std::nullopt;
    }

    Status run(RunContext& ctx, StageRecord& record) override {
        ctx.report.set("topology", render_topo_json(build_gpu_matrix(*ctx.snapshot)));
        record.state = StageState::kRan;
        return ok_status();
    }
};

}  // namespace

std::unique_ptr<Stage> topology_stage() { return std::make_unique<TopologyStage>(); }

}  // namespace trainrig::validate

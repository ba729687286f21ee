// The gpu-bench stage: host-device copies, HBM bandwidth, GEMM, peer-to-peer and NCCL (and, past
// quick, a burn-in) through the GPU benchmark plugin (`trainrig bench run h2d d2h ...`). Required
// on a machine with NVIDIA GPUs; a machine without any skips it.
#include "validate/stages/measuring_stage.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

class GpuBenchStage final : public MeasuringStage {
public:
    const char* id() const override { return "gpu-bench"; }
    const char* title() const override { return "GPU benchmarks"; }
    double budget_seconds(RunLevel l) const override { return per_level(l, 60, 600, 3600); }
    bool required(const RunContext& ctx) const override { return ctx.scope == Scope::kGpu; }

    std::optional<Skip> applies(const RunContext& ctx) const override {
        if (ctx.snapshot && ctx.scope != Scope::kGpu) return Skip{ctx.tree ? kLiveOnly : kNoGpu};
        return MeasuringStage::applies(ctx);
    }

protected:
    std::vector<std::string> benchmarks(const RunContext& ctx) const override {
        std::vector<std::string> ids = {"h2d", "d2h", "hbm", "gemm", "p2p", "nccl"};
        if (ctx.options.level != RunLevel::kQuick) ids.push_back("burn");
        return ids;
    }
};

}  // namespace

std::unique_ptr<Stage> gpu_bench_stage() { return std::make_unique<GpuBenchStage>(); }

}  // namespace trainrig::validate

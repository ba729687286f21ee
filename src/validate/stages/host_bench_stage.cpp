// The host-bench stage: the CPU's memory bandwidth and the storage under --data-dir (`trainrig
// bench run cpu-mem storage`).
#include "validate/stages/measuring_stage.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

class HostBenchStage final : public MeasuringStage {
public:
    const char* id() const override { return "host-bench"; }
    const char* title() const override { return "host benchmarks (memory, storage)"; }
    double budget_seconds(RunLevel l) const override { return per_level(l, 10, 90, 180); }

protected:
    std::vector<std::string> benchmarks(const RunContext&) const override {
        return {"cpu-mem", "storage"};
    }
};

}  // namespace

std::unique_ptr<Stage> host_bench_stage() { return std::make_unique<HostBenchStage>(); }

}  // namespace trainrig::validate

// The training stage: a short training run (`trainrig bench run train`), on the GPUs when the
// machine has them, that must show the loss falling.
#include "validate/stages/measuring_stage.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {

namespace {

class TrainingStage final : public MeasuringStage {
public:
    const char* id() const override { return "training"; }
    const char* title() const override { return "a training run"; }
    double budget_seconds(RunLevel l) const override { return per_level(l, 15, 120, 600); }
    bool required(const RunContext&) const override { return true; }

protected:
    std::vector<std::string> benchmarks(const RunContext&) const override { return {"train"}; }
};

}  // namespace

std::unique_ptr<Stage> training_stage() { return std::make_unique<TrainingStage>(); }

}  // namespace trainrig::validate

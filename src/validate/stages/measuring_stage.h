// What the measuring stages (host-bench, gpu-bench, data-path, training) have in common: their
// benchmarks run as `trainrig bench run` in a supervised child (stage_child.h), on the live
// machine, less the benchmarks --skip names; their records join the run's bench document, judged
// by bench's expectations (or --baseline's medians), and a child that did not finish makes the
// stage "could not run" with an item that says which benchmarks to re-run alone.
#pragma once

#include <string>
#include <vector>

#include "validate/stages/stage.h"

namespace trainrig::validate {

class MeasuringStage : public Stage {
public:
    bool measures() const final { return true; }
    std::vector<std::string> bench_ids(const RunContext& ctx) const final {
        return benchmarks(ctx);
    }
    std::optional<Skip> applies(const RunContext& ctx) const override;
    Status run(RunContext& ctx, StageRecord& record) override;

protected:
    // The bench ids the stage runs at this level, before --skip.
    virtual std::vector<std::string> benchmarks(const RunContext& ctx) const = 0;
    // Readies the stage's input once it is sure to run; an error is its "could not run".
    virtual Status prepare(RunContext&, bench::BenchOptions&) { return ok_status(); }

private:
    std::vector<std::string> chosen(const RunContext& ctx) const;
};

}  // namespace trainrig::validate

#include "bench/bench_runner.h"

#include "bench/gpu_plugin.h"
#include "measure/expectations.h"
#include "plan/hardware.h"

namespace trainrig::bench {

bool needs_gpu(const std::string& id) {
    for (const char* g : {"h2d", "d2h", "hbm", "gemm", "p2p", "nccl", "nccl-pairs", "burn"})
        if (id == g) return true;
    return false;
}

bool run_benchmarks(const std::vector<Benchmark*>& chosen, const BenchContext& ctx, BenchRun& run,
                    const RunHooks& hooks) {
    bool ran_gpu = false, cancelled = false;
    for (auto* b : chosen) {
        if (std::string why = b->skip_reason(ctx); !why.empty()) {
            if (hooks.named && hooks.named(*b)) run.unavailable = true;
            run.skipped.push_back({b->id(), std::move(why)});
            continue;
        }
        if (hooks.starting) hooks.starting(*b);
        const size_t first = run.records.size();
        const Status s = b->run(ctx, run.records);
        ran_gpu |= needs_gpu(b->id());
        run.reporting = run.reporting && b->reports_here();
        if (ctx.cancelled()) {
            // What it measured until the stop request is evidence, not the machine's figure.
            for (size_t i = first; i < run.records.size(); ++i) run.records[i].partial = true;
            cancelled = true;
            break;
        }
        if (!s.ok()) {
            run.errors.push_back({b->id(), s.message()});
            if (hooks.failed) hooks.failed(*b, s);
        }
    }
    if (ran_gpu) run.machine["gpus"] = gpu_devices();
    apply_expectations(run.records, run.machine, plan::builtin_hardware());
    return !cancelled;
}

}  // namespace trainrig::bench

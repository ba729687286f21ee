// Running a chosen list of benchmarks into one BenchRun: what `trainrig bench run` and
// `trainrig validate` both do, so a benchmark is skipped, fails or is judged the same way in both.
#pragma once

#include <functional>
#include <vector>

#include "bench/benchmark.h"
#include "measure/bench_document.h"

namespace trainrig::bench {

// A benchmark that needs a GPU (h2d, d2h, hbm, gemm, p2p, nccl, burn).
bool needs_gpu(const std::string& id);

struct RunHooks {
    std::function<bool(const Benchmark&)> named;     // asked for by name: skipped = unavailable
    std::function<void(const Benchmark&)> starting;  // before each benchmark that runs
    std::function<void(const Benchmark&, const Status&)> failed;  // after one that could not run
};

// Runs `chosen` in order, appending to `run`: a benchmark that does not apply here goes to
// run.skipped with its reason, one that fails to run.errors. Then the machine's GPUs (when a GPU
// benchmark ran) and every record's expectation. False when cancelled: the records measured
// until then stay in `run`, judged as the others.
bool run_benchmarks(const std::vector<Benchmark*>& chosen, const BenchContext& ctx, BenchRun& run,
                    const RunHooks& hooks = {});

}  // namespace trainrig::bench

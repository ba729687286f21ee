// `trainrig bench run train`: a short, fixed training run of the reference GPT-2 (warm-up steps,
// then timed steps) on generated tokens, reported as bench records: tokens/s, model FLOP/s, MFU
// when the device's peak is known, and peak memory next to what the trainer's own accounting
// predicts. Token values do not change the work, so no dataset is needed.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

struct TrainBenchOptions {
    std::string backend = "cpu";
    std::string model = "tiny";
    int seq = 256;
    int batch = 4;
    int warmup_steps = 2;
    int timed_steps = 8;
    int threads = 0;  // 0: all cores
};

Result<std::vector<BenchRecord>> run_train_bench(const TrainBenchOptions& options);

}  // namespace trainrig::bench

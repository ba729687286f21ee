// `trainrig bench run loader`: how fast the window loader delivers batches from memory-mapped
// shards (shuffled windows of T + 1 tokens, widened to uint32), after one untimed pass that
// brings the files into the page cache.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

struct LoaderBenchOptions {
    std::vector<std::string> data;  // Megatron prefixes or llm.c shards
    uint64_t batch = 8;
    uint64_t window = 1024;
    uint64_t steps = 200;
    unsigned repeats = 5;
};

Result<std::vector<BenchRecord>> run_loader_bench(const LoaderBenchOptions& options);

}  // namespace trainrig::bench

#include "bench/loader_bench.h"

#include <chrono>

#include "data/loader/window_loader.h"

namespace trainrig::bench {

Result<std::vector<BenchRecord>> run_loader_bench(const LoaderBenchOptions& options) {
    auto corpus = data::TokenCorpus::open(options.data);
    if (!corpus) return corpus.status();
    data::LoaderOptions lo;
    lo.batch = options.batch;
    lo.window = options.window;
    auto created = data::WindowLoader::create(*corpus, lo);
    if (!created) return created.status();
    data::WindowLoader loader = std::move(created).value();
    std::vector<uint32_t> batch;
    // Warm-up: one pass over min(steps, epoch) batches.
    for (uint64_t s = 0; s < options.steps; ++s) loader.next_batch(batch);
    BenchRecord tps;
    tps.bench = "loader";
    tps.name = "tokens";
    tps.unit = "tokens/s";
    tps.params = {{"batch", options.batch},
                  {"window", options.window},
                  {"corpus_tokens", (*corpus)->tokens()},
                  {"steps", options.steps}};
    BenchRecord mbps = tps;
    mbps.name = "bytes";
    mbps.unit = "bytes/s";
    BenchRecord bps = tps;
    bps.name = "batches";
    bps.unit = "batches/s";
    uint64_t checksum = 0;
    for (unsigned run = 0; run < options.repeats; ++run) {
        const auto start = std::chrono::steady_clock::now();
        for (uint64_t s = 0; s < options.steps; ++s) {
            loader.next_batch(batch);
            checksum += batch.front() + batch.back();
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double tokens = static_cast<double>(options.steps * batch.size());
        tps.samples.push_back(tokens / seconds);
        mbps.samples.push_back(tokens * 4 / seconds);
        bps.samples.push_back(static_cast<double>(options.steps) / seconds);
    }
    const nlohmann::json counted = {{"tokens_per_batch", batch.size()},
                                    {"bytes_per_batch", batch.size() * 4},
                                    {"checksum", checksum}};
    std::vector<BenchRecord> records;
    for (auto* r : {&tps, &mbps, &bps}) {
        r->counted = counted;
        records.push_back(*r);
    }
    return records;
}

}  // namespace trainrig::bench

#include "bench/tokenizer_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/user_file.h"

namespace trainrig::bench {
Result<std::vector<BenchRecord>> run_tokenizer_bench(const data::Tokenizer& tokenizer,
                                                     const TokenizerBenchOptions& options) {
    std::string corpus;
    for (const auto& path : options.inputs) {
        auto text = read_user_file(path, "--input", size_t{2} << 30);
        if (!text) return text.status();
        corpus += *text;
    }
    if (corpus.empty()) return Status{Errc::kInvalidInput, "the --input files are empty"};
    const auto documents = static_cast<uint64_t>(std::count(corpus.begin(), corpus.end(), '\n'));
    std::vector<BenchRecord> records;
    for (const unsigned threads : options.threads) {
        BenchRecord mbps;
        mbps.bench = "tokenizer";
        mbps.name = "bytes";
        mbps.unit = "bytes/s";
        mbps.params = {
            {"tokenizer", tokenizer.kind()},
            {"threads", threads},
        };
        BenchRecord tps = mbps;
        tps.name = "tokens";
        tps.unit = "tokens/s";
        BenchRecord dps = mbps;
        dps.name = "documents";
        dps.unit = "documents/s";
        uint64_t tokens = 0;
        for (unsigned run = 0; run <= options.repeats; ++run) {
            // Every thread encodes the whole corpus: N threads do N times the work, so the
            // figure shows how encoding scales, not how evenly a mixed corpus splits.
            std::vector<std::vector<uint32_t>> out(threads);
            std::vector<Status> status(threads);
            const auto start = std::chrono::steady_clock::now();
            std::vector<std::thread> pool;
            for (size_t i = 0; i < threads; ++i) {
                pool.emplace_back([&, i] {
                    // A vector of the thread's own: the headers in `out` share a cache line,
                    // and pushing ids through them would measure false sharing.
                    std::vector<uint32_t> ids;
                    ids.reserve(corpus.size() / 2);
                    auto enc = tokenizer.encoder(false);
                    Status s = enc->encode(corpus, ids);
                    out[i] = std::move(ids);
                    status[i] = std::move(s);
                });
            }
            for (auto& t : pool) t.join();
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            for (const auto& s : status)
                if (!s.ok()) return s;
            tokens = out[0].size();
            if (run == 0) continue;  // warm-up
            const double n = threads;
            mbps.samples.push_back(n * static_cast<double>(corpus.size()) / seconds);
            tps.samples.push_back(n * static_cast<double>(tokens) / seconds);
            dps.samples.push_back(n * static_cast<double>(documents) / seconds);
        }
        const nlohmann::json counted = {
            {"bytes", corpus.size()}, {"tokens", tokens}, {"documents", documents}};
        for (auto* r : {&mbps, &tps, &dps}) {
            r->counted = counted;
            records.push_back(*r);
        }
    }
    return records;
}

}  // namespace trainrig::bench

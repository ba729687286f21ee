#include "bench/tokenizer_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/user_file.h"

namespace trainrig::bench {
namespace {

// Splits text into n parts at line ends, so no thread starts mid-line.
std::vector<std::string_view> split_parts(std::string_view text, unsigned n) {
    std::vector<std::string_view> parts;
    size_t at = 0;
    for (unsigned i = 0; i < n && at < text.size(); ++i) {
        size_t end = i + 1 == n ? text.size() : at + (text.size() - at) / (n - i);
        end = std::min(text.size(), end);
        if (const size_t nl = text.find('\n', end); i + 1 < n && nl != std::string_view::npos)
            end = nl + 1;
        else if (i + 1 < n)
            end = text.size();
        parts.push_back(text.substr(at, end - at));
        at = end;
    }
    return parts;
}

}  // namespace

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
        const auto parts = split_parts(corpus, threads);
        BenchRecord mbps{"tokenizer", {}, "MB/s", {}, {}, std::nullopt};
        mbps.params = {
            {"tokenizer", tokenizer.kind()},
            {"threads", threads},
        };
        BenchRecord tps = mbps;
        tps.unit = "tokens/s";
        BenchRecord dps = mbps;
        dps.unit = "documents/s";
        uint64_t tokens = 0;
        for (unsigned run = 0; run <= options.repeats; ++run) {
            std::vector<std::vector<uint32_t>> out(parts.size());
            std::vector<Status> status(parts.size());
            const auto start = std::chrono::steady_clock::now();
            std::vector<std::thread> pool;
            for (size_t i = 0; i < parts.size(); ++i) {
                pool.emplace_back([&, i] {
                    auto enc = tokenizer.encoder(false);
                    out[i].reserve(parts[i].size() / 2);
                    status[i] = enc->encode(parts[i], out[i]);
                });
            }
            for (auto& t : pool) t.join();
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            for (const auto& s : status)
                if (!s.ok()) return s;
            tokens = 0;
            for (const auto& o : out) tokens += o.size();
            if (run == 0) continue;  // warm-up
            mbps.samples.push_back(static_cast<double>(corpus.size()) / seconds / 1e6);
            tps.samples.push_back(static_cast<double>(tokens) / seconds);
            dps.samples.push_back(static_cast<double>(documents) / seconds);
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

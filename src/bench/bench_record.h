// One measured quantity of `trainrig bench`: its samples and summary, in the trainrig.bench JSON
// shape (docs/formats.md). Benchmarks without a hardware expectation report status "info".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainrig::bench {

struct BenchRecord {
    std::string bench;      // "tokenizer", "loader"
    nlohmann::json params;  // what was measured
    std::string unit;       // "MB/s", "tokens/s", ...
    std::vector<double> samples;
    nlohmann::json counted;  // bytes, tokens, documents per sample
    std::optional<double> expected;

    double median() const;
    double min() const;
    double max() const;
    double cv() const;  // coefficient of variation (stddev / mean)
};

nlohmann::json record_json(const BenchRecord& r);
nlohmann::json bench_document(const std::vector<BenchRecord>& records);
std::string render_records_text(const std::vector<BenchRecord>& records);

}  // namespace trainrig::bench

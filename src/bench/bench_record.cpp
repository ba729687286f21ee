#include "bench/bench_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/version.h"

namespace trainrig::bench {

double BenchRecord::median() const {
    if (samples.empty()) return 0;
    std::vector<double> v = samples;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double BenchRecord::min() const {
    return samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
}

double BenchRecord::max() const {
    return samples.empty() ? 0 : *std::max_element(samples.begin(), samples.end());
}

double BenchRecord::cv() const {
    if (samples.size() < 2) return 0;
    const double mean =
        std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    double var = 0;
    for (const double s : samples) var += (s - mean) * (s - mean);
    var /= static_cast<double>(samples.size() - 1);
    return mean > 0 ? std::sqrt(var) / mean : 0;
}

nlohmann::json record_json(const BenchRecord& r) {
    nlohmann::json j = {{"bench", r.bench},     {"params", r.params},   {"unit", r.unit},
                        {"samples", r.samples}, {"median", r.median()}, {"min", r.min()},
                        {"max", r.max()},       {"cv", r.cv()},         {"counted", r.counted}};
    if (r.expected) {
        j["expected"] = *r.expected;
        j["ratio"] = *r.expected > 0 ? r.median() / *r.expected : 0.0;
    } else {
        j["expected"] = nullptr;
        j["ratio"] = nullptr;
    }
    j["status"] = "info";
    return j;
}

nlohmann::json bench_document(const std::vector<BenchRecord>& records) {
    nlohmann::json results = nlohmann::json::array();
    for (const auto& r : records) results.push_back(record_json(r));
    return {{"schema", "trainrig.bench"},
            {"schema_version", 1},
            {"trainrig_version", kTrainrigVersion},
            {"results", results}};
}

namespace {

// 3 significant figures with an SI prefix: 2.08 G, 41.3, 254 k.
std::string si(double v) {
    const char* prefix[] = {"", " k", " M", " G", " T"};
    int k = 0;
    while (std::abs(v) >= 1000 && k < 4) {
        v /= 1000;
        ++k;
    }
    const int decimals = std::abs(v) >= 100 ? 0 : std::abs(v) >= 10 ? 1 : 2;
    return fmt::format("{:.{}f}{}", v, decimals, prefix[k]);
}

}  // namespace

std::string render_records_text(const std::vector<BenchRecord>& records) {
    std::string out;
    for (const auto& r : records) {
        // MB/s is already scaled; the counts (tokens/s, batches/s) get an SI prefix.
        const auto num = [&](double v) {
            return r.unit.starts_with("MB") ? fmt::format("{:.1f}", v) : si(v);
        };
        std::string params;
        for (const auto& [k, v] : r.params.items())
            params += fmt::format("{}={} ", k, v.is_string() ? v.get<std::string>() : v.dump());
        out +=
            fmt::format("{:<10} {:<44} median {:>8} {:<12} (min {}, max {}, cv {:.1f}%, {} runs)\n",
                        r.bench, params, num(r.median()), r.unit, num(r.min()), num(r.max()),
                        100 * r.cv(), r.samples.size());
    }
    return out;
}

}  // namespace trainrig::bench

#include "measure/bench_record.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/emulated_gpu.h"

namespace trainrig::bench {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool on_emulated_gpu(const BenchRecord& r) {
    const auto name = r.target.is_object() ? r.target.find("gpu_name") : r.target.end();
    return name != r.target.end() && name->is_string() &&
           is_emulated_gpu(name->get_ref<const std::string&>());
}

double BenchRecord::median() const { return median_of(samples); }

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

bool higher_is_better(const BenchRecord& r) {
    return r.unit == "fraction" || r.unit.ends_with("/s");
}

}  // namespace trainrig::bench

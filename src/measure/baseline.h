// Expectations from an earlier run: `bench run --baseline FILE` takes each measurement's median
// in a trainrig.bench document (a known-good machine of the same kind, or this machine before a
// change) as the expected value for the same measurement now. Measurements match when bench,
// name, params and target are all equal. Only figures where more is better are compared (a step
// time or a peak memory below the baseline is no shortfall).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

struct Baseline {
    std::string path;
    std::map<std::string, double> medians;  // by record_key
};

// Errors name the file and what is wrong with it.
Result<Baseline> parse_baseline(const std::string& text, const std::string& path);
Result<Baseline> load_baseline(const std::string& path);
// From a parsed trainrig.bench document (validate's report carries one).
Result<Baseline> baseline_from_document(const nlohmann::json& doc, const std::string& path);

std::string record_key(const BenchRecord& r);

// Sets `expected` from the baseline where a measurement matches; others keep theirs. Returns how
// many matched.
size_t apply_baseline(std::vector<BenchRecord>& records, const Baseline& baseline);

}  // namespace trainrig::bench

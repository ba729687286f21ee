// Expectations from an earlier run: `bench run --baseline FILE` takes each measurement's median
// in a trainrig.bench document (a known-good machine of the same kind, or this machine before a
// change) as the expected value for the same measurement now. Measurements match when bench,
// name, params and target are all equal.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/bench_record.h"
#include "core/status.h"

namespace trainrig::bench {

struct Baseline {
    std::string path;
    std::map<std::string, double> medians;  // by record_key
};

// Errors name the file and what is wrong with it.
Result<Baseline> parse_baseline(const std::string& text, const std::string& path);
Result<Baseline> load_baseline(const std::string& path);

std::string record_key(const BenchRecord& r);

// Sets `expected` from the baseline where a measurement matches; others keep theirs.
void apply_baseline(std::vector<BenchRecord>& records, const Baseline& baseline);

}  // namespace trainrig::bench

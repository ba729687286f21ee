// The verdict on a measurement: its median against the expectation (pass at or above
// `pass` × expected — at or above expected itself when the expectation is a floor, an acceptance
// bar such as 90 % scaling —, warn at or above `warn` ×, fail below), and fail whenever the
// benchmark's own data check found a wrong value. Without an expectation the verdict is "info";
// a record of a run that was stopped before it finished is "incomplete", whatever it shows.
#pragma once

#include <string>

#include "core/status.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

enum class Verdict { kPass, kWarn, kFail, kInfo, kIncomplete };

struct Thresholds {
    double pass = 0.9;
    double warn = 0.75;
};

// Checks 0 < warn <= pass; the error names the flags.
Status validate_thresholds(const Thresholds& t);

Verdict judge(const BenchRecord& r, const Thresholds& t);
const char* verdict_name(Verdict v);

// median / expected, or nullopt without a (positive) expectation.
std::optional<double> ratio(const BenchRecord& r);

}  // namespace trainrig::bench

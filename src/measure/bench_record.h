// One measured quantity of `trainrig bench`: its samples and summary, what it was measured on,
// whether the benchmark's own data check passed, and what the hardware should reach. Rendered
// as the trainrig.bench JSON record (docs/formats.md) or a table line (bench_document.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainrig::bench {

struct BenchRecord {
    std::string bench;  // benchmark id: "cpu-mem", "storage", "gemm"
    std::string name;   // which of its measurements: "triad", "random-read", "bf16"
    nlohmann::json params = nlohmann::json::object();   // how it was measured
    nlohmann::json target = nlohmann::json::object();   // on what: {"numa_node": 0}, {"gpu": 1}
    std::string unit;                                   // SI: "bytes/s", "IO/s", "FLOP/s"
    std::vector<double> samples;                        // one per timed repeat, in `unit`
    nlohmann::json counted = nlohmann::json::object();  // bytes, operations ... per sample
    std::optional<double> expected;                     // what this hardware should reach
    std::string expected_source;                        // where `expected` comes from
    bool expected_floor = false;   // `expected` is a bar: pass at or above it, no tolerance
    std::string no_expectation;    // without `expected`: why ("virtual disk: ...")
    std::optional<bool> verified;  // the benchmark's own data check
    std::string verify_detail;     // what was checked, or what was wrong
    // Measured by a run that was stopped before it finished (Ctrl-C, a stage past its limit): kept
    // as evidence, never judged. A training run stopped after one step has not had the chance to
    // learn, and a half-finished sweep is not the machine's figure.
    bool partial = false;

    double median() const;
    double min() const;
    double max() const;
    double cv() const;  // coefficient of variation (sample stddev / mean)
};

// Whether more of it is better: a rate or a fraction of a peak (bytes/s, FLOP/s, tokens/s,
// fraction), not a time ("s") or a size ("bytes"). Only these are judged against an expected
// value from an earlier run.
bool higher_is_better(const BenchRecord& r);

// Measured on an emulated device (core/emulated_gpu.h): its timings are the host CPU's.
bool on_emulated_gpu(const BenchRecord& r);

// Median of a list (0 when empty).
double median_of(std::vector<double> v);

}  // namespace trainrig::bench

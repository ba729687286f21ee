// A `trainrig bench run`: its records with their verdicts, the benchmarks that were skipped
// (and why) or could not run, and the machine they ran on. One document, rendered as the
// trainrig.bench JSON (docs/formats.md) or as a table for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/bench_record.h"
#include "measure/verdict.h"

namespace trainrig::bench {

struct BenchRun {
    Thresholds thresholds;
    nlohmann::json machine = nlohmann::json::object();
    std::vector<BenchRecord> records;
    struct Note {
        std::string bench;
        std::string text;
    };
    std::vector<Note> skipped;  // did not apply here: the reason
    std::vector<Note> errors;   // applied, but could not run: the error sentence
    bool unavailable = false;   // a benchmark named on the command line was skipped
    // False on the ranks of a multi-process launch that do not report: another rank's document
    // is the run's, so this process prints and writes none (Benchmark::reports_here).
    bool reporting = true;

    // 2 if a benchmark could not run (or one asked for by name was skipped), else 1 if a
    // measurement failed, else 0.
    int exit_code() const;
};

nlohmann::json record_json(const BenchRecord& r, const Thresholds& t);
// The measurement part of a record (no verdict): from the GPU plugin or a baseline document.
Result<BenchRecord> record_from_json(const nlohmann::json& j);
nlohmann::json bench_document(const BenchRun& run);
// `verbose`: every sample under its measurement.
std::string render_bench_text(const BenchRun& run, bool verbose = false);

}  // namespace trainrig::bench

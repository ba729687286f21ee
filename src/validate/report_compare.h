// Two validate reports compared: of one machine a month apart, or of a golden node and this one
// (`trainrig report diff OLD NEW`). What changed is judged as validate judges: an item is a
// doctor finding, a measurement or an alert by its id and devices; a measurement moved when the
// new median is outside bench's tolerance of the old one (measure/baseline.h: the old median is
// the expected value, as `--baseline` makes it).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/verdict.h"

namespace trainrig::validate {

// report.json of a report directory, or the file itself: a trainrig.validate document (version
// 1). The error names the path and what is wrong.
Result<nlohmann::json> load_report(const std::string& path);

struct MeasurementMove {
    std::string id;  // bench.<bench>.<name>
    std::string devices;
    std::string unit;
    double old_median = 0, new_median = 0;
    bench::Verdict verdict = bench::Verdict::kPass;  // the new against the old: warn or fail
};

struct ReportDiff {
    std::string old_host, new_host;  // two machines compared (a golden node) when they differ
    std::string old_verdict, new_verdict;
    int verdict_change = 0;  // < 0 better, > 0 worse (READY < WITH WARNINGS < UNKNOWN < NOT READY)
    std::vector<nlohmann::json> appeared, resolved;  // items of the new / the old report
    std::vector<MeasurementMove> slower;             // below the old by more than the tolerance
    std::vector<MeasurementMove> faster;             // above the old by more than the tolerance
    std::vector<MeasurementMove> steady;             // within the tolerance
    size_t compared = 0;                             // measurements in both
    size_t only_old = 0, only_new = 0;               // measurements in one report only
    size_t cut_short = 0;  // new measurements a stop request cut short: not compared
    // Required checks (coverage.missing) not judged now that were before, and the reverse;
    // compared only when both reports carry coverage (schema version 2).
    bool coverage_compared = false;
    std::vector<std::string> unjudged_now, judged_again;
    // Anything worse: the verdict, an item that appeared, a measurement slower, a required check
    // no longer judged.
    bool worse() const {
        return verdict_change > 0 || !appeared.empty() || !slower.empty() || !unjudged_now.empty();
    }
    // What is worse, for the last line: "the verdict", "1 item appeared", "2 measurements slower",
    // "1 required check no longer judged".
    std::vector<std::string> worse_parts() const;
};

ReportDiff diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report,
                        const bench::Thresholds& tolerance);

nlohmann::json diff_json(const ReportDiff& d);
// `verbose`: the measurements that did not move too.
std::string render_diff_text(const ReportDiff& d, bool verbose);

}  // namespace trainrig::validate

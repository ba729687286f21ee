// Lemon nodes (docs/fleet.md, "Lemon nodes"): a node that keeps failing is drained even on a day
// its newest report passes, because the next failure is a matter of time and every job it takes
// in between is at risk. From several validate reports of one host (each carries the host and
// when it was written): a lemon was drained in at least `drains` of its last `reports` reports
// written within `days` of its newest. `fleet judge` and the health checks (`slurm
// healthcheck`, `npd`) judge a host's reports by this one rule.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace trainrig::validate {

struct LemonOptions {
    size_t drains = 3;    // --lemon-drains
    size_t reports = 10;  // --lemon-reports
    double days = 30;     // --lemon-days
};

// One report of a host: when, its own verdict, the checks it failed.
struct HistoryEntry {
    std::string source;
    std::string written_at;
    std::time_t written = 0;  // 0: not known (such a report is not counted)
    std::string verdict;
    std::vector<std::string> failed;
    bool drained() const { return verdict == "NOT READY"; }
};

struct Lemon {
    size_t drains = 0;   // of the reports counted, how many were drained
    size_t reports = 0;  // how many were counted
    std::string check;   // the check it failed most often ("" when its reports name none)
};

// `history`: every report of one host, any order. Sorted newest first, then judged.
std::optional<Lemon> judge_lemon(std::vector<HistoryEntry>& history, const LemonOptions& o);

// "gpu.ecc: drained in 3 of its last 5 reports within 30 days" (a health check's problem detail)
std::string lemon_detail(const Lemon& l, const LemonOptions& o);
// "lemon " and the detail (fleet judge's drain reason)
std::string lemon_reason(const Lemon& l, const LemonOptions& o);

}  // namespace trainrig::validate

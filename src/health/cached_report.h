// The latest `trainrig validate` report of this node, as the health check reads it: its failed
// measurements (benchmarks, training, watch) are problems until a newer report passes. Doctor's
// own items are not taken from it: the health check runs those checks again, now.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "core/status.h"
#include "health/node_health.h"

namespace trainrig::health {

struct CachedReport {
    std::string path;         // the report.json read
    std::string host;         // the host it is about
    std::string finished_at;  // when validate finished
    std::time_t finished = 0;
    std::string verdict;
    // validate was interrupted, or the report changed since it was written ("report changed
    // since written: ..."): what it says is not a reason to act, so `failed` stays empty.
    bool incomplete = false;
    std::string changed;
    std::vector<Problem> failed;             // level "fail", stage other than doctor
    std::vector<std::string> failed_checks;  // every failed item's id, doctor's too (the history)
};

// `path` is a report directory, its report.json, or a folder of report directories (the newest
// finished one is taken; an interrupted one only when none finished whole). kNotFound when there
// is none; kInvalidInput when it is not a trainrig.validate report.
Result<CachedReport> read_cached_report(const std::string& path);

// Every report at `path` (one, or each of a folder's), unreadable ones left out; kNotFound, or
// the last one's error, when none could be read. For a host's history (validate/lemon.h).
Result<std::vector<CachedReport>> read_cached_reports(const std::string& path);

// Of reports read, the node's state: the one that finished last (an interrupted one only when
// none finished whole). `reports` is not empty.
const CachedReport& newest_report(const std::vector<CachedReport>& reports);

}  // namespace trainrig::health

// Whether a validate report may be acted on (docs/report.md, "Acting on a report"): the commands
// that drain, page or rank nodes on a report's word (slurm healthcheck, npd, fleet judge) and the
// ones that show it (report, report diff, validate --baseline) ask here, so that they agree. An
// interrupted run is never a reason to act, and a report changed since validate wrote it is not
// the report validate wrote.
#pragma once

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace trainrig::validate {

// validate was interrupted (the report's `incomplete`), or one of its stages was.
bool report_incomplete(const nlohmann::json& report);

// "" when the report at `path` (a report directory, or its report.json) is as validate wrote it,
// or carries no SHA256SUMS to tell (a node's report gathered over MPI); else one sentence that
// names what changed: "report changed since written: report.json changed".
std::string report_changes(const std::filesystem::path& path);

// Which of two reports of one machine is its state: the newest that finished whole, an
// interrupted one only when none did. True when a (incomplete or not, finished at) is.
bool report_supersedes(bool a_incomplete, std::time_t a_finished, bool b_incomplete,
                       std::time_t b_finished);

}  // namespace trainrig::validate

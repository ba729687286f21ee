// Placeholders in a report directory's path (docs/fleet.md, "Reports on a shared filesystem"):
// `{host}`, `{rank}` and `{time}` are expanded by each node itself, so that one command line
// started on many nodes (srun, mpirun, pdsh) writes one directory per node. A shell's
// `$(hostname)` in the same place is expanded once, on the host that submits the job.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trainrig::validate {

struct PathFacts {
    std::string host;     // {host}: the host name its report gives
    int rank = 0;         // {rank}: this process's rank in its job (0 outside one)
    std::time_t time{0};  // {time}: when the run started, as UTC 20261207T101500Z
};

// `pattern` with its placeholders replaced; `option` names it in the error sentence when a
// brace does not open a known placeholder ("{{" and "}}" stand for a brace itself).
Result<std::string> expand_report_path(std::string_view pattern, const PathFacts& facts,
                                       std::string_view option);

// Whether `pattern` is well formed, before anything runs (the facts are not known yet).
Status check_report_path(std::string_view pattern, std::string_view option);

}  // namespace trainrig::validate

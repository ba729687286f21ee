// Talking to Slurm through `scontrol`, the interface operators use too: reading the nodes'
// states, draining and resuming one. Each call has a deadline: a slurmctld that does not answer
// must not hold a health check past Slurm's own limit.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "slurm/slurm_node.h"

namespace trainrig::slurm {

struct Scontrol {
    std::string program = "scontrol";  // --scontrol
    std::chrono::milliseconds deadline{5000};
};

// Every node, from `scontrol show node -o`.
Result<std::vector<SlurmNode>> show_nodes(const Scontrol& s);

// The commands the health check runs (and --dry-run prints).
std::vector<std::string> drain_command(const Scontrol& s, const std::string& node,
                                       const std::string& reason);
std::vector<std::string> resume_command(const Scontrol& s, const std::string& node);

// Runs an update; an error carries scontrol's own message.
Status run_update(const Scontrol& s, const std::vector<std::string>& argv);

}  // namespace trainrig::slurm

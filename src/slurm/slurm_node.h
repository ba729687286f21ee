// A Slurm node as `scontrol show node -o` prints it: one line per node of KEY=VALUE fields. Only
// what the health check decides on is kept: the state and its flags, the reason, the partitions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::slurm {

// What trainrig writes at the start of every reason it sets, and the only reasons it clears. The
// check id follows it: `sinfo -R` shows about 20 characters of a reason.
inline constexpr std::string_view kReasonPrefix = "trainrig:";

struct SlurmNode {
    std::string name;
    std::string state;  // "IDLE+DRAIN", "MIXED", "DOWN+DRAIN+NOT_RESPONDING"
    std::string reason;  // without Slurm's " [user@time]" suffix; empty when none
    std::vector<std::string> partitions;

    // DRAIN flag, or the DRAINED/DRAINING base states older releases print.
    bool drained() const;
    // Drained, with a reason trainrig wrote.
    bool drained_by_trainrig() const;
};

// One line of `scontrol show node -o`. kInvalidInput when it has no NodeName.
Result<SlurmNode> parse_node_line(std::string_view line);
// Every node of `scontrol show node -o` (blank lines skipped).
Result<std::vector<SlurmNode>> parse_nodes(std::string_view text);

}  // namespace trainrig::slurm

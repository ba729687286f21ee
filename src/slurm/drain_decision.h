// What the Slurm health check does about a node, decided from its health and the nodes' states
// alone (pure, so every rule below is a unit test): the rules of a health check that shares a
// cluster with people.
//   - Never replace a reason trainrig did not write: an operator's drain stays as it is.
//   - Only resume a node trainrig drained, and only when it is healthy again.
//   - Never drain or resume on a check that could not judge (unknown): no news is not bad news.
//   - In an operator's maintenance window, do nothing at all (core/maintenance_window.h).
//   - The circuit breaker: refuse to drain when trainrig already drained max_share of the node's
//     partitions. A rule that misjudges every node must not empty a cluster (NVSentinel stops at
//     50 % of nodes; docs/fleet.md).
#pragma once

#include <string>
#include <vector>

#include "health/node_health.h"
#include "slurm/slurm_node.h"

namespace trainrig::slurm {

enum class ActionKind {
    kNothing,  // healthy and not drained by trainrig, or unknown
    kDrain,    // drain (or re-word trainrig's own reason) with `reason`
    kResume,   // trainrig's drain, and healthy now
    kKeep,     // already drained by trainrig for this reason
    kLeave,    // drained by someone else: left alone
    kRefuse,   // the circuit breaker: too many nodes drained by trainrig already
};
const char* action_name(ActionKind k);  // "nothing", "drain", ...

struct Action {
    ActionKind kind = ActionKind::kNothing;
    std::string reason;   // for kDrain: "trainrig:gpu.pcie-link GPU 3 at x8 (x16 expected)"
    std::string message;  // one sentence for the log; empty when the health line says it all
};

struct DrainPolicy {
    double max_share = 0.5;    // refuse once this share of the partition is drained by trainrig
    size_t reason_chars = 80;  // the reason written, prefix and id included
    bool dry_run = false;      // nothing is changed: the message says what would be done
};

// `all` is every node scontrol shows (the breaker counts the partitions of `self` in it).
Action decide(const health::HealthResult& health, const SlurmNode& self,
              const std::vector<SlurmNode>& all, const DrainPolicy& policy = {});

// "trainrig:<id> <detail>", cut to policy.reason_chars.
std::string drain_reason(const health::Problem& p, size_t max_chars);

}  // namespace trainrig::slurm

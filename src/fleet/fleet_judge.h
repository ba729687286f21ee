// Judging a fleet (docs/fleet.md): each node's own verdict, then the rules no node can apply to
// itself. Drift: a version or setting that differs from the fleet's majority. Shape: hardware
// (GPU count and links, NICs, memory) that differs from the majority. Outliers: a measurement
// below the fleet's median by more than its spread allows, with median and MAD so that a few
// bad nodes cannot move the reference (robust_stats.h).
#pragma once

#include <string>
#include <vector>

#include "fleet/node_input.h"

namespace trainrig::fleet {

struct FleetOptions {
    // A measurement is an outlier when it is worse than the fleet median by more than
    // max(z x 1.4826 x MAD, min_deviation x median): three robust standard deviations, and never
    // less than 3 % (a benchmark repeatable to 1 % must not flag a 2 % difference).
    double z = 3.0;
    double min_deviation = 0.03;
    size_t min_nodes = 4;  // measured on fewer nodes, a measurement is not judged for outliers
};

struct FleetFinding {
    std::string id;                     // "drift.driver", "shape.gpus", "outlier.gemm.bf16"
    std::string kind;                   // "drift", "shape", "outlier", "node"
    std::string summary;                // one sentence
    std::vector<std::string> nodes;     // the nodes it names (the minority, the slow ones)
    std::vector<std::string> evidence;  // "node07: 550.54.15 (majority 550.90.07 on 63 nodes)"
};

enum class NodeState { kReady, kDrain, kDrifted, kUnknown };
const char* node_state_name(NodeState s);  // "READY", "DRAIN", "DRIFTED", "UNKNOWN"

struct NodeVerdict {
    std::string name;
    std::string source;
    std::string own_verdict;  // the node's own: READY ... UNKNOWN
    NodeState state = NodeState::kReady;
    std::vector<std::string> reasons;  // ids first: "gpu.pcie-link", "outlier.gemm.bf16 GPU 3"
};

struct FleetResult {
    std::vector<NodeVerdict> nodes;
    std::vector<FleetFinding> findings;
    size_t count(NodeState s) const;
    // 1 when a node is to be drained or has drifted, else 2 when one is unknown, else 0: the
    // precedence of validate's verdict (a failure outranks what could not be judged).
    int exit_code() const;
};

FleetResult judge_fleet(const std::vector<NodeInput>& nodes, const FleetOptions& options = {});

}  // namespace trainrig::fleet

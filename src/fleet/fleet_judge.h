// Judging a fleet (docs/fleet.md): each node's own verdict, then the rules no node can apply to
// itself. Drift: a version or setting that differs from the fleet's majority. Shape: hardware
// (GPU count and links, NICs, memory) that differs from the majority. Outliers: a measurement
// below the fleet's median by more than its spread allows, with median and MAD so that a few
// bad nodes cannot move the reference (robust_stats.h). Lemons: a node drained in too many of its
// recent reports (lemon.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fleet/node_input.h"
#include "measure/pair_schedule.h"
#include "validate/lemon.h"

namespace trainrig::fleet {

struct FleetOptions {
    // A measurement is an outlier when it is worse than the fleet median by more than
    // max(z x 1.4826 x MAD, min_deviation x median): three robust standard deviations, and never
    // less than 3 % (a benchmark repeatable to 1 % must not flag a 2 % difference).
    double z = 3.0;
    double min_deviation = 0.03;
    size_t min_nodes = 4;  // measured on fewer nodes, a measurement is not judged for outliers
    // A value that is the median of fewer samples is not judged for outliers: with 1 % noise a
    // single sample drains about 11 healthy nodes in 1,000 at these thresholds, a median of 3
    // 1 in 29,100 while finding every 5 % slowdown (docs/accuracy.md, "Fleet gray failures").
    // validate takes 5 to 10 samples of each GPU benchmark, 3 at --level quick for NCCL.
    size_t min_samples = 3;
    validate::LemonOptions lemon;  // docs/fleet.md, "Lemon nodes"
};

struct FleetFinding {
    std::string id;                     // "drift.driver", "shape.gpus", "outlier.gemm.bf16"
    std::string kind;                   // "drift", "shape", "outlier", "pair"
    std::string summary;                // one sentence
    std::vector<std::string> nodes;     // the nodes it names (the minority, the slow ones)
    std::vector<std::string> evidence;  // "node07: 550.54.15 (majority 550.90.07 on 63 nodes)"
};

enum class NodeState { kReady, kDrain, kDrifted, kUnknown };
const char* node_state_name(NodeState s);  // "READY", "DRAIN", "DRIFTED", "UNKNOWN"

// How one node fared on one check: a cell of the report's node x check heat map.
enum class CheckState { kOk, kDrifted, kDrain, kUnknown, kAbsent };
const char* check_state_name(CheckState s);  // "ok", "drift", "drain", "unknown", "none"

struct CheckCell {
    CheckState state = CheckState::kAbsent;
    std::string text;  // the node's value there: "2.18.3", "-6.2 % GPU 3", "NOT READY"
};

struct NodeVerdict {
    std::string name;
    std::string source;
    std::string own_verdict;  // the node's own: READY ... UNKNOWN
    NodeState state = NodeState::kReady;
    std::vector<std::string> reasons;      // ids first: "gpu.pcie-link", "outlier.gemm.bf16 GPU 3"
    std::vector<std::string> warnings;     // NodeInput::warnings
    std::vector<CheckCell> cells;          // one per FleetResult::checks
    std::optional<validate::Lemon> lemon;  // drained too often lately (lemon.h)
    std::vector<validate::HistoryEntry> history;  // its reports, newest first, when it has several
    NodeCoverage coverage;  // what its own validate judged (NodeInput::coverage)
};

// One measurement across the fleet, for the report's plots: every node's and GPU's value against
// the median and the tolerance an outlier is judged by.
struct MeasurementSpread {
    struct Flagged {
        std::string node, device;
        double value = 0;
    };
    std::string id;      // the id its outliers get: "outlier.gemm.bf16"
    std::string key;     // Measurement::key: bench, name, parameters, target
    std::string label;   // "gemm bf16"
    std::string params;  // the parameters that tell two measurements of one label apart, or ""
    std::string unit;
    bool higher_is_better = true;
    bool judged = false;  // measured on at least FleetOptions::min_nodes nodes
    size_t nodes = 0;     // how many nodes measured it
    double median = 0;
    double allowed = 0;          // worse than the median by more than this is an outlier
    std::vector<double> values;  // every value, in the nodes' order
    std::vector<Flagged> flagged;
};

// Bandwidth measured between two nodes at a time (docs/fleet.md, "Node pairs"), judged with the
// pair judgement of pair_schedule.h. Node indices are into the fleet's nodes, in the order
// judge_fleet is given them (FleetResult::nodes has the same order).
struct FleetPairs {
    std::string source;                // the file they came from
    std::string label = "pair busbw";  // what was measured: "nccl all-reduce busbw"
    std::string unit = "bytes/s";
    std::vector<bench::PairResult> results;
    std::vector<bench::PairResult> retests;  // suspects against nodes known good
    // Filled by judge_fleet:
    bool judged = false;  // at least FleetOptions::min_nodes pairs
    bench::PairJudgement judgement;
    std::vector<int> bad;         // slow with a node known good, and with every partner: drain
    std::vector<int> unresolved;  // every pair slow, none with a node known good: re-test
};

struct FleetResult {
    std::vector<NodeVerdict> nodes;
    std::vector<FleetFinding> findings;
    // The heat map's columns: "verdict" (each node's own), then the id of every finding, in
    // the findings' order. A check nobody differs on has no column.
    std::vector<std::string> checks;
    std::vector<MeasurementSpread> measurements;  // ordered by key
    std::optional<FleetPairs> pairs;
    std::vector<SetAside> set_aside;  // older reports of a host judged from its newest
    size_t count(NodeState s) const;
    // 2 when a node could not be judged (the fleet was not judged whole: a script must not take
    // the drain list for all there is), else 1 when a node is to be drained or has drifted,
    // else 0.
    int exit_code() const;
};

// `pairs`, when given, adds the pair judgement: a node slow with every partner, one of them
// known good, is drained; one slow only with other suspects is UNKNOWN until re-tested.
// `older`: the hosts' older reports (keep_newest_per_host), their history for the lemon rule; the
// result keeps them as set_aside.
FleetResult judge_fleet(const std::vector<NodeInput>& nodes, const FleetOptions& options = {},
                        std::optional<FleetPairs> pairs = std::nullopt,
                        std::vector<SetAside> older = {});

}  // namespace trainrig::fleet

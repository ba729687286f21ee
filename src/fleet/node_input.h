// One node of a fleet as `fleet judge` reads it: a validate report (its directory or its
// report.json, with raw/snapshot.json beside it when there) or a snapshot (`trainrig collect`).
// What the cross-node rules compare: versions, hardware shape, settings and measurements. A file
// that cannot be read becomes a node whose `problem` says why: judged UNKNOWN, never dropped. A
// report that can be read but not acted on (an interrupted validate, a report changed since it
// was written) is a node whose `doubt` says why: UNKNOWN too, and out of the fleet's statistics.
#pragma once

#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace trainrig::fleet {

struct Measurement {
    std::string key;     // the same measurement on every node: bench, name, params, target
    std::string label;   // "gemm bf16", "loader tokens"
    std::string params;  // how it was measured, for people: "dtype=bf16 m=8192", or ""
    std::string device;  // "GPU 3", a disk, or "" for the node as a whole
    std::string unit;
    double value = 0;    // the median of its samples
    size_t samples = 0;  // how many; 0 when not said
    bool higher_is_better = true;
};

// What a node's own validate judged of the checks its class requires (validate/coverage.h).
struct NodeCoverage {
    bool known = false;  // false: a report from before coverage (schema 1)
    std::string label;   // its class: "8x H100 SXM5 80GB with NVSwitch, --level quick"
    size_t required = 0, judged = 0;
    std::vector<std::string> missing;  // the required checks not judged
};

struct NodeInput {
    std::string name;                   // the host name it reports; the file name when unreadable
    std::string source;                 // the path it was read from
    std::string kind;                   // "report" or "snapshot"
    std::string verdict;                // its own: READY, READY WITH WARNINGS, NOT READY, UNKNOWN
    std::vector<std::string> failed;    // the ids of its own failed checks, for the drain reason
    std::string problem;                // non-empty: it could not be read, and why
    std::string doubt;                  // non-empty: read, but not to be acted on, and why
    std::vector<std::string> warnings;  // judged, but something about it went wrong: said
    bool incomplete = false;            // a report of an interrupted validate
    std::string written_at;             // a report's finished_at, a snapshot's collected_at
    std::time_t written = 0;            // the same, 0 when unknown
    std::map<std::string, std::string> versions;  // validate/versions.h, less trainrig itself
    std::map<std::string, std::string> shape;     // gpus, gpu_links, nics, infiniband, memory
    std::map<std::string, std::string> settings;  // live kernel settings, NCCL environment
    // The environment was read: an NCCL_* variable another node sets is "unset" here, a
    // difference too (one node with NCCL_P2P_DISABLE=1 is the drift to find).
    bool environment_read = false;
    std::vector<Measurement> measurements;
    NodeCoverage coverage;
    // What it says enters the fleet's majorities, medians and drain list.
    bool judged() const { return problem.empty() && doubt.empty(); }
};

// An older report or snapshot of a host that another one judges (docs/fleet.md, "One state per
// node"): the node's history, not a second node.
struct SetAside {
    std::string name;        // the host
    std::string source;      // the path set aside
    std::string written_at;  // when it was written, or ""
    std::string kept;        // the path that is the node's state
    std::time_t written = 0;
    std::string verdict;              // its own, then
    std::vector<std::string> failed;  // the checks it failed then
};

// Reads one path: a report directory, a report.json, or a snapshot JSON.
NodeInput load_node(const std::string& path);

// The fleet report's JSON file (fleet_report.h), which a folder of nodes may also hold.
inline constexpr const char* kFleetReportJson = "fleet-report.json";

// Every node under the paths: a report directory is one node; another directory gives each
// report directory and each *.json directly inside it (but fleet-report.json); a file is one
// node. Sorted by name.
std::vector<NodeInput> load_nodes(const std::vector<std::string>& paths);

// Keeps one node per host: its newest report or snapshot that finished whole (an interrupted
// report only when the host has no other; the same rule as the health checks'). The others are
// removed from `nodes` and returned. Unreadable files name no host and are all kept.
std::vector<SetAside> keep_newest_per_host(std::vector<NodeInput>& nodes);

}  // namespace trainrig::fleet

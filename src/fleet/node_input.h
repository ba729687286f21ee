// One node of a fleet as `fleet judge` reads it: a validate report (its directory or its
// report.json, with raw/snapshot.json beside it when there) or a snapshot (`trainrig collect`).
// What the cross-node rules compare: versions, hardware shape, settings and measurements. A file
// that cannot be read becomes a node whose `problem` says why: judged UNKNOWN, never dropped.
#pragma once

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
    double value = 0;  // the median of its samples
    bool higher_is_better = true;
};

struct NodeInput {
    std::string name;                 // the host name it reports; the file name when unreadable
    std::string source;               // the path it was read from
    std::string kind;                 // "report" or "snapshot"
    std::string verdict;              // its own: READY, READY WITH WARNINGS, NOT READY, UNKNOWN
    std::vector<std::string> failed;  // the ids of its own failed checks, for the drain reason
    std::string problem;              // non-empty: it could not be read, and why
    std::map<std::string, std::string> versions;  // validate/versions.h, less trainrig itself
    std::map<std::string, std::string> shape;     // gpus, gpu_links, nics, infiniband, memory
    std::map<std::string, std::string> settings;  // live kernel settings, NCCL environment
    std::vector<Measurement> measurements;
};

// Reads one path: a report directory, a report.json, or a snapshot JSON.
NodeInput load_node(const std::string& path);

// The fleet report's JSON file (fleet_report.h), which a folder of nodes may also hold.
inline constexpr const char* kFleetReportJson = "fleet-report.json";

// Every node under the paths: a report directory is one node; another directory gives each
// report directory and each *.json directly inside it (but fleet-report.json); a file is one
// node. Sorted by name.
std::vector<NodeInput> load_nodes(const std::vector<std::string>& paths);

}  // namespace trainrig::fleet

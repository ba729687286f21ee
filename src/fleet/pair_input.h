// Node-pair measurements as `fleet judge --pairs FILE` reads them: a trainrig.fleet.pairs
// document (docs/formats.md) or `bench run nccl-pairs --json`'s records, bandwidths measured
// between two nodes at a time, named by the nodes' names, matched to the nodes being judged.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "fleet/fleet_judge.h"
#include "fleet/node_input.h"

namespace trainrig::fleet {

inline constexpr const char* kPairsSchema = "trainrig.fleet.pairs";

// The pairs of `doc` (a trainrig.fleet.pairs document, or the trainrig.bench document of `bench
// run nccl-pairs --json`), their node names turned into indices of `nodes`. A document of another
// schema or version, a pair naming one node twice or a node not among `nodes`, or a value that
// is not a positive number is refused, naming the entry (`source` names the file).
Result<FleetPairs> pairs_from_json(const nlohmann::json& doc, const std::vector<NodeInput>& nodes,
                                   const std::string& source);

// Reads and matches a pairs file.
Result<FleetPairs> load_pairs(const std::string& path, const std::vector<NodeInput>& nodes);

}  // namespace trainrig::fleet

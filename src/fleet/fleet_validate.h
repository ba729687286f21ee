// `trainrig validate --fleet` (docs/fleet.md): every rank of an MPI job (mpirun -npernode 1, or
// srun --mpi=pmix) validates its own node; rank 0 gathers the reports over MPI (nothing shared
// needed), judges them as a fleet (fleet/fleet_judge.h) and writes the fleet report, with every
// node's report.json and snapshot under nodes/ so the judgement can be checked and redone with
// `trainrig fleet judge DIR/nodes`.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "fleet/fleet_judge.h"
#include "fleet/node_input.h"
#include "train/communicator.h"

namespace trainrig::fleet {

// This rank's place in the MPI job. srun without an MPI plugin starts tasks that each see a
// fleet of one: said, not run as N fleets of one.
Result<std::unique_ptr<train::Communicator>> join_fleet();

// What a rank sends: its report's files (report.json, raw/snapshot.json), or why it has none
// (`error`); `warning`, when not empty, is what went wrong beside them (its own report directory
// could not be written) and is said with its node, which is judged all the same.
std::string encode_node_payload(const std::map<std::string, std::string>& files,
                                const std::string& error, const std::string& warning = "");

struct GatheredFleet {
    std::vector<fleet::NodeInput> nodes;      // one per rank, in rank order
    std::map<std::string, std::string> files;  // nodes/rankNNNN/... for the fleet report
};

// Rank 0's view: each rank's payload, or nullopt for a rank that never reported (UNKNOWN, as
// one whose payload cannot be read). Two ranks on one host are told apart by their rank.
// `staging` is an empty folder the nodes are read back from.
Result<GatheredFleet> read_gathered(const std::vector<std::optional<std::string>>& payloads,
                                    double waited_s, const std::string& staging);

struct JudgedFleet {
    FleetResult result;
    GatheredFleet gathered;
};
// Rank 0: every rank's payload read back (through a staging folder in the temp directory, removed
// afterwards) and judged as `fleet judge` judges.
Result<JudgedFleet> judge_payloads(const std::vector<std::optional<std::string>>& payloads,
                                   double waited_s);

// The fleet report's files: fleet-report.json/md/html and the nodes' own.
std::map<std::string, std::string> fleet_report_files(const fleet::FleetResult& result,
                                                      const GatheredFleet& gathered,
                                                      int exit_code);

}  // namespace trainrig::fleet

// A judged fleet for people (a summary line, the findings, the drain list) and as the
// trainrig.fleet document (docs/formats.md). Pure functions of the result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fleet/fleet_judge.h"

namespace trainrig::fleet {

// "FLEET: 61 READY, 2 to drain, 1 drifted, 0 unknown (64 nodes)"
std::string fleet_line(const FleetResult& r);
std::string render_fleet_text(const FleetResult& r, bool verbose);
// What a scheduler is told when it drains the node (`trainrig slurm healthcheck`'s format):
// "trainrig:<id> <detail>" of its first reason, cut to the length Slurm shows.
std::string scheduler_reason(const NodeVerdict& n);
nlohmann::json fleet_json(const FleetResult& r);

}  // namespace trainrig::fleet

// How a plan is shown: a table for people, `--explain` with every formula, and JSON (schema
// "trainrig.plan", documented in docs/formats.md). Renderers only format; numbers come from
// the planner.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "plan/search.h"

namespace trainrig::plan {

// `explained`: the formulas are printed above it (--explain), so no pointer to them.
std::string render_plan_table(const Plan& plan, const Target& target, bool explained = false);
std::string render_plan_explain(const Plan& plan);
nlohmann::json plan_to_json(const Plan& plan, const Target& target);

std::string render_compare_table(const std::vector<Candidate>& candidates, Rank rank);
nlohmann::json compare_to_json(const std::vector<Candidate>& candidates, Rank rank,
                               const Target& target);

}  // namespace trainrig::plan

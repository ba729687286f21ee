// The training run in validate's report: the loss at every step and where each step's time went
// (data wait, forward, backward, communication, optimizer), read from the train benchmark's
// step-time record (`counted.steps`, docs/METHODOLOGY.md). Pure functions of the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainrig::validate {

// The report's train step-time record, or null when the run did not happen.
const nlohmann::json* training_record(const nlohmann::json& report);

// report.html's section: an SVG loss curve and a stacked bar per step; empty without a run.
std::string training_html(const nlohmann::json& report);
// report.md's section: the loss from first to last step and the median phase times.
std::string training_markdown(const nlohmann::json& report);

}  // namespace trainrig::validate

// The validate report for people, rendered from the report document alone (pure functions of
// report.json, so `trainrig report` can render a saved one the same way).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/markup.h"
#include "core/text.h"

namespace trainrig::validate {

// A string member of a report object, or `none`.
std::string report_text(const nlohmann::json& j, const char* key, const std::string& none = "");

// "against the baseline B (host, level, time): N of its M measurements matched", or empty.
std::string baseline_line(const nlohmann::json& report);

// Whether the report's GPU telemetry is one to show: a watch section, of a watch stage that was
// not skipped (older reports kept the section of a skipped stage).
bool telemetry_shown(const nlohmann::json& report);

// The columns of "What to do first" some item fills: a column empty in every row is left out.
struct ItemColumns {
    bool where = false, measured = false;
};
ItemColumns item_columns(const nlohmann::json& items);

// "training: loss 10.82 -> 9.68 over 4 steps, 507 tokens/s (cpu backend, model tiny)", or empty
// without a training run.
std::string training_line(const nlohmann::json& report);

// The terminal's answer: the verdict line, what failed and what to do (the first ten unless
// `verbose`), the training run's result, the stages that did not run, and where the report is;
// `verbose` adds every stage and every measurement against its expected value.
std::string render_report_text(const nlohmann::json& report, const std::string& report_dir,
                               bool verbose);
// report.md: the same for a ticket or a pull request.
std::string render_report_markdown(const nlohmann::json& report);

}  // namespace trainrig::validate

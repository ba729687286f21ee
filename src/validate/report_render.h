// The validate report for people, rendered from the report document alone (pure functions of
// report.json, so `trainrig report` can render a saved one the same way).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/text.h"

namespace trainrig::validate {

// A string member of a report object, or `none`.
std::string report_text(const nlohmann::json& j, const char* key, const std::string& none = "");

// "against the baseline B (host, level, time): N of its M measurements matched", or empty.
std::string baseline_line(const nlohmann::json& report);

// Text for HTML: & < > " escaped.
std::string html_escape(std::string_view s);

// The terminal's answer: the verdict line, what failed and what to do (the first ten unless
// `verbose`), the stages that did not run, and where the report is.
std::string render_report_text(const nlohmann::json& report, const std::string& report_dir,
                               bool verbose);
// report.md: the same for a ticket or a pull request.
std::string render_report_markdown(const nlohmann::json& report);

}  // namespace trainrig::validate

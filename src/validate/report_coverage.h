// The report's coverage (coverage.h) for people, from report.json alone: one line for the
// terminal, a section for report.md and report.html. What a class requires and did not judge
// comes first, with why; then every required check and its outcome; then what the class does not
// require, grouped by why. A report of schema 1 (before coverage) renders nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainrig::validate {

// "coverage: 30 of 30 required checks judged (4x A100-SXM4-80GB, --level quick, machine tree)"
// and a line per required check not judged; "" without coverage.
std::string coverage_text(const nlohmann::json& report);
std::string coverage_markdown(const nlohmann::json& report);
std::string coverage_html(const nlohmann::json& report);

}  // namespace trainrig::validate

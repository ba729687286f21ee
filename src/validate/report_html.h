// report.html, rendered from the report document alone: one self-contained file (no network,
// no external URL) that works from a USB stick and prints on A4 (docs/report.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/text.h"

namespace trainrig::validate {

std::string render_report_html(const nlohmann::json& report);

}  // namespace trainrig::validate

// The fleet report (docs/fleet.md, "Fleet report"): a directory with fleet-report.json (the
// trainrig.fleet document), fleet-report.md and fleet-report.html, rendered from the judged fleet
// alone. Readable at 1,000 nodes: nodes that are READY are counted, not listed one per row;
// identical rows of the heat map are one row; the plots are distributions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "fleet/fleet_judge.h"

namespace trainrig::fleet {

inline constexpr const char* kFleetReportMarkdown = "fleet-report.md";
inline constexpr const char* kFleetReportHtml = "fleet-report.html";

// The order nodes are listed in: those to act on first.
inline constexpr NodeState kActFirst[] = {NodeState::kDrain, NodeState::kUnknown,
                                          NodeState::kDrifted, NodeState::kReady};

// One row of the heat map: nodes in the same state whose every check is in the same state.
struct HeatRow {
    NodeState state = NodeState::kReady;
    std::vector<size_t> nodes;  // indices into FleetResult::nodes
};
// The rows to act on first (DRAIN, UNKNOWN, DRIFTED, then READY), each state's rows in the order
// of their first node.
std::vector<HeatRow> heat_rows(const FleetResult& r);
// A row's cell for FleetResult::checks[check]: its state, with the text its nodes share
// ("2.18.3"), or how many texts they have ("3 values").
CheckCell row_cell(const FleetResult& r, const HeatRow& row, size_t check);

// A list shown open when it has at most this many rows; longer, it is folded (and searchable).
inline constexpr size_t kOpenRows = 50;

std::string render_fleet_html(const FleetResult& r);
std::string render_fleet_markdown(const FleetResult& r);

// Writes fleet-report.json (the trainrig.fleet document with the envelope of `command`, as
// `fleet judge --json` prints it), fleet-report.md and fleet-report.html into `dir`. A new
// directory is written as a validate report is (validate/report_dir.h: a temporary directory
// renamed at the end, with SHA256SUMS); into an existing one the three files are written whole
// and fsynced first, then renamed over their names, and nothing else in it is touched. A failure
// leaves no file half written.
Status write_fleet_report(const FleetResult& r, const std::filesystem::path& dir,
                          std::string_view command = "fleet judge");

}  // namespace trainrig::fleet

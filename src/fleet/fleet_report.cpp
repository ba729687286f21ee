// The fleet report's rows and its directory. The files are written as a validate report is
// (validate/report_dir.h); into an existing directory they go through a staging directory inside
// it, so that each is complete and on disk before it takes its name.
#include "fleet/fleet_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>

#include "core/json_result.h"
#include "core/staged_file.h"
#include "core/text.h"
#include "fleet/fleet_render.h"
#include "fleet/node_input.h"
#include "validate/report_dir.h"

namespace trainrig::fleet {

namespace fs = std::filesystem;

namespace {

int act_first_rank(NodeState s) {
    return static_cast<int>(std::find(std::begin(kActFirst), std::end(kActFirst), s) -
                            std::begin(kActFirst));
}

// The three files into an existing directory: staged whole (fsynced, with SHA256SUMS) in a
// directory of their own inside it, then renamed over their names; the staging directory goes.
Status replace_in_dir(const fs::path& dir, const std::map<std::string, std::string>& files) {
    for (const auto& [name, content] : files) {
        std::error_code ec;
        const auto st = fs::status(dir / name, ec);
        if (fs::exists(st) && !fs::is_regular_file(st))
            return {Errc::kInvalidInput,
                    fmt::format("{} exists and is not a file; no report was written",
                                (dir / name).string()),
                    "move it away, or give another --out"};
    }
    const fs::path staging = dir / fmt::format(".fleet-report-{}", static_cast<long>(::getpid()));
    std::error_code ec;
    fs::remove_all(staging, ec);  // a leftover of a killed run of this pid
    TRAINRIG_TRY(validate::write_report_dir(staging, files));
    std::vector<std::string> replaced;
    Status s = ok_status();
    for (const auto& [name, content] : files) {
        if (::rename((staging / name).c_str(), (dir / name).c_str()) != 0) {
            s = errno_status(errno, "rename the report to", (dir / name).string());
            break;
        }
        replaced.push_back(name);
    }
    if (s.ok()) s = fsync_parent((dir / kFleetReportJson).string());
    fs::remove_all(staging, ec);
    if (!s.ok())
        return {s.code(), s.message() + (replaced.empty() ? std::string("; no report was written")
                                                          : "; written whole before it failed: " +
                                                                join(replaced, ", "))};
    return ok_status();
}

}  // namespace

std::vector<HeatRow> heat_rows(const FleetResult& r) {
    std::map<std::pair<int, std::vector<CheckState>>, HeatRow> groups;
    std::vector<std::pair<int, std::vector<CheckState>>> order;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& n = r.nodes[i];
        std::pair<int, std::vector<CheckState>> key{act_first_rank(n.state), {}};
        for (const auto& c : n.cells) key.second.push_back(c.state);
        auto [it, fresh] = groups.try_emplace(key);
        if (fresh) {
            it->second.state = n.state;
            order.push_back(key);
        }
        it->second.nodes.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<HeatRow> rows;
    for (const auto& key : order) rows.push_back(std::move(groups[key]));
    return rows;
}

CheckCell row_cell(const FleetResult& r, const HeatRow& row, size_t check) {
    const CheckCell& first = r.nodes[row.nodes.front()].cells[check];
    std::set<std::string> texts;
    for (size_t i : row.nodes) {
        texts.insert(r.nodes[i].cells[check].text);
        if (texts.size() > 1) break;
    }
    if (texts.size() == 1) return first;
    size_t distinct = 0;
    texts.clear();
    for (size_t i : row.nodes) distinct += texts.insert(r.nodes[i].cells[check].text).second;
    return {first.state, fmt::format("{} values", distinct)};
}

Status write_fleet_report(const FleetResult& r, const fs::path& dir, std::string_view command) {
    const std::map<std::string, std::string> files = {
        {kFleetReportJson, json_result(fleet_json(r), command, r.exit_code())},
        {kFleetReportMarkdown, render_fleet_markdown(r)},
        {kFleetReportHtml, render_fleet_html(r)}};
    std::error_code ec;
    const auto st = fs::status(dir, ec);
    if (!fs::exists(st)) return validate::write_report_dir(dir, files);
    if (!fs::is_directory(st))
        return {
            Errc::kInvalidInput,
            fmt::format("{} exists and is not a directory; no report was written", dir.string()),
            "give a directory to --out"};
    return replace_in_dir(dir, files);
}

}  // namespace trainrig::fleet

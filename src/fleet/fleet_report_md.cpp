// fleet-report.md: the fleet report for a ticket or a pull request, the HTML page's content
// without its plots (each plot is a row of numbers here).
#include <fmt/format.h>

#include <algorithm>

#include "core/markup.h"
#include "core/quantity.h"
#include "core/text.h"
#include "fleet/fleet_render.h"
#include "fleet/fleet_report.h"
#include "measure/bench_document.h"

namespace trainrig::fleet {

namespace {

// "a, b, c and 7 more"
std::string some_names(const std::vector<std::string>& names, size_t most,
                       std::string_view sep = ", ") {
    if (names.size() <= most) return join(names, sep);
    return join(std::vector<std::string>(names.begin(), names.begin() + static_cast<long>(most)),
                sep) +
           fmt::format(" and {} more", names.size() - most);
}

std::string md_mark(const CheckCell& c) {
    switch (c.state) {
        case CheckState::kOk:
            return "·";
        case CheckState::kDrifted:
            return "~ " + markdown_cell(c.text);
        case CheckState::kDrain:
            return "× " + markdown_cell(c.text);
        case CheckState::kUnknown:
            return "? " + markdown_cell(c.text);
        case CheckState::kAbsent:
            return "";
    }
    return "";
}

std::string md_drain(const FleetResult& r) {
    std::string md = "## Drain list\n\n";
    if (r.count(NodeState::kDrain) == 0) return md + "No node is to be drained.\n\n";
    md += "| node | scheduler reason | all reasons |\n|---|---|---|\n";
    for (const auto& v : r.nodes)
        if (v.state == NodeState::kDrain)
            md += fmt::format("| `{}` | `{}` | {} |\n", v.name, markdown_cell(scheduler_reason(v)),
                              markdown_cell(join(v.reasons, "; ")));
    return md + "\n";
}

std::string md_heat(const FleetResult& r) {
    std::string md =
        "## Nodes × checks\n\nNodes in the same state on every check share a row. · as the "
        "fleet, ~ drifted, × to drain, ? could not be judged, blank: not measured.\n\n| nodes | "
        "state |";
    for (const auto& c : r.checks) md += " `" + c + "` |";
    md += "\n|---|---|" + [&] {
        std::string d;
        for (size_t i = 0; i < r.checks.size(); ++i) d += "---|";
        return d;
    }() + "\n";
    for (const auto& row : heat_rows(r)) {
        std::vector<std::string> names;
        for (size_t i : row.nodes) names.push_back(r.nodes[i].name);
        md += fmt::format("| {}{} | {} |",
                          row.nodes.size() == 1 ? "" : fmt::format("{} nodes: ", names.size()),
                          markdown_cell(some_names(names, 10)), node_state_name(row.state));
        for (size_t c = 0; c < r.checks.size(); ++c)
            md += " " + md_mark(row_cell(r, row, c)) + " |";
        md += "\n";
    }
    return md + "\n";
}

std::string md_findings(const FleetResult& r) {
    std::string md = "## Findings\n\n";
    if (r.findings.empty()) return md + "None: no node differs from the fleet.\n\n";
    md += "| id | what | evidence |\n|---|---|---|\n";
    for (const auto& f : r.findings)
        md += fmt::format("| `{}` | {} | {} |\n", f.id, markdown_cell(f.summary),
                          markdown_cell(some_names(f.evidence, 4, "; ")));
    return md + "\n";
}

std::string md_measurements(const FleetResult& r) {
    if (r.measurements.empty()) return "";
    std::string md =
        "## Measurements across the fleet\n\n| measurement | values | median | outlier beyond | "
        "outliers |\n|---|---|---|---|---|\n";
    for (const auto& m : r.measurements) {
        const std::string edge =
            m.judged ? fmt::format("{} ({}{:.1f} %)",
                                   format_quantity(m.higher_is_better ? m.median - m.allowed
                                                                      : m.median + m.allowed,
                                                   m.unit),
                                   m.higher_is_better ? "-" : "+",
                                   m.median != 0 ? 100 * m.allowed / std::fabs(m.median) : 0.0)
                     : "not judged: too few nodes";
        std::vector<std::string> who;
        for (const auto& f : m.flagged)
            who.push_back(fmt::format("{}{} {:+.1f} %", f.node,
                                      f.device.empty() ? "" : " " + f.device,
                                      100 * (f.value - m.median) / m.median));
        md += fmt::format("| {}{} | {} on {} nodes | {} | {} | {} |\n", m.label,
                          m.params.empty() ? "" : " (" + markdown_cell(m.params) + ")",
                          m.values.size(), m.nodes, format_quantity(m.median, m.unit), edge,
                          markdown_cell(some_names(who, 8)));
    }
    return md + "\n";
}

std::string md_pairs(const FleetResult& r) {
    if (!r.pairs) return "";
    const FleetPairs& p = *r.pairs;
    auto name = [&](int i) { return r.nodes[static_cast<size_t>(i)].name; };
    std::string md = fmt::format("## Node pairs: {}\n\n{} pairs and {} re-tests from `{}`. ",
                                 p.label, p.results.size(), p.retests.size(), p.source);
    if (!p.judged) return md + "Too few pairs to judge.\n\n";
    md += fmt::format("Median {}; a pair below {} is slow: {} of them.\n\n",
                      format_quantity(p.judgement.median, p.unit),
                      format_quantity(p.judgement.threshold, p.unit), p.judgement.slow.size());
    std::vector<std::string> bad, unresolved;
    for (int i : p.bad) bad.push_back(name(i));
    for (int i : p.unresolved) unresolved.push_back(name(i));
    if (!bad.empty())
        md += "- slow with every partner, one known good (drain): " + join(bad, ", ") + "\n";
    if (!unresolved.empty())
        md +=
            "- every pair slow, no partner known good (re-test): " + join(unresolved, ", ") + "\n";
    std::vector<const bench::PairResult*> slow;
    for (const auto& x : p.results)
        if (x.value < p.judgement.threshold) slow.push_back(&x);
    if (slow.empty()) return md + "\n";
    md += "\n| pair | value |\n|---|---|\n";
    for (size_t i = 0; i < slow.size() && i < kOpenRows; ++i)
        md += fmt::format("| {} - {} | {} |\n", name(slow[i]->pair.first),
                          name(slow[i]->pair.second), format_quantity(slow[i]->value, p.unit));
    if (slow.size() > kOpenRows)
        md += fmt::format("\n{} more slow pairs in fleet-report.json.\n", slow.size() - kOpenRows);
    return md + "\n";
}

std::string md_nodes(const FleetResult& r) {
    std::string md = "## Every node\n\n";
    std::string table;
    for (NodeState st : kActFirst)
        for (const auto& v : r.nodes)
            if (v.state == st && st != NodeState::kReady)
                table += fmt::format("| `{}` | {} | {} | {} |\n", v.name, node_state_name(st),
                                     v.own_verdict, markdown_cell(join(v.reasons, "; ")));
    if (!table.empty())
        md += "| node | state | its own verdict | reasons |\n|---|---|---|---|\n" + table + "\n";
    std::vector<std::string> ready;
    for (const auto& v : r.nodes)
        if (v.state == NodeState::kReady) ready.push_back(v.name);
    if (!ready.empty()) md += fmt::format("READY ({}): {}\n", ready.size(), join(ready, ", "));
    if (!r.set_aside.empty()) {
        md += "\nSet aside, an older report of a host judged from its newest:\n\n";
        for (const auto& a : r.set_aside)
            md += fmt::format("- `{}` {} ({}); its state is {}\n", a.name, markdown_cell(a.source),
                              a.written_at.empty() ? "written when unknown" : a.written_at,
                              markdown_cell(a.kept));
    }
    return md;
}

}  // namespace

std::string render_fleet_markdown(const FleetResult& r) {
    std::string md = fmt::format("# {}\n\n", fleet_line(r));
    md += fmt::format("{} READY, {} DRAIN, {} DRIFTED, {} UNKNOWN. Exit code {}.\n\n",
                      r.count(NodeState::kReady), r.count(NodeState::kDrain),
                      r.count(NodeState::kDrifted), r.count(NodeState::kUnknown), r.exit_code());
    return md + md_drain(r) + md_heat(r) + md_findings(r) + md_measurements(r) + md_pairs(r) +
           md_nodes(r);
}

}  // namespace trainrig::fleet

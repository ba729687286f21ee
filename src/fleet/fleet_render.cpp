#include "fleet/fleet_render.h"

#include <fmt/format.h>

#include "core/text.h"
#include "slurm/drain_decision.h"

namespace trainrig::fleet {

std::string fleet_line(const FleetResult& r) {
    return fmt::format("FLEET: {} READY, {} to drain, {} drifted, {} unknown ({} node{})",
                       r.count(NodeState::kReady), r.count(NodeState::kDrain),
                       r.count(NodeState::kDrifted), r.count(NodeState::kUnknown), r.nodes.size(),
                       r.nodes.size() == 1 ? "" : "s");
}

std::string render_fleet_text(const FleetResult& r, bool verbose) {
    std::string t = fleet_line(r) + "\n";
    for (const auto& a : r.set_aside)
        t += fmt::format("set aside: {} {}{}: an older report of the host; its state is {}\n",
                         a.name, a.source,
                         a.written_at.empty() ? "" : " (written " + a.written_at + ")", a.kept);
    const size_t shown = verbose ? r.findings.size() : std::min<size_t>(r.findings.size(), 20);
    if (!r.findings.empty()) t += "\nfindings:\n";
    for (size_t i = 0; i < shown; ++i) {
        const auto& f = r.findings[i];
        t += fmt::format("  {:<28} {}\n", f.id, f.summary);
        const size_t lines = verbose ? f.evidence.size() : std::min<size_t>(f.evidence.size(), 4);
        for (size_t e = 0; e < lines; ++e) t += "      " + f.evidence[e] + "\n";
        if (lines < f.evidence.size())
            t += fmt::format("      ... {} more (-v)\n", f.evidence.size() - lines);
    }
    if (shown < r.findings.size())
        t += fmt::format("  ... {} more findings (-v)\n", r.findings.size() - shown);
    std::string listed;
    for (const auto& n : r.nodes) {
        if (n.state == NodeState::kReady && !verbose) continue;
        listed += fmt::format("  {:<8} {:<24} {}\n", node_state_name(n.state), n.name,
                              join(n.reasons, "; "));
    }
    if (!listed.empty())
        t += std::string("\n") + (verbose ? "nodes:\n" : "nodes to act on:\n") + listed;
    for (const auto& n : r.nodes)
        for (const auto& w : n.warnings) t += fmt::format("warning: {}: {}\n", n.name, w);
    return t;
}

std::string scheduler_reason(const NodeVerdict& n) {
    const std::string first = n.reasons.empty() ? node_state_name(n.state) : n.reasons.front();
    const size_t space = first.find(' ');
    const health::Problem p{first.substr(0, space),
                            space == std::string::npos ? "" : first.substr(space + 1)};
    return slurm::drain_reason(p, slurm::DrainPolicy{}.reason_chars);
}

namespace {

nlohmann::json pairs_json(const FleetPairs& p, const FleetResult& r) {
    auto names = [&](const std::vector<int>& v) {
        std::vector<std::string> out;
        for (int i : v) out.push_back(r.nodes[static_cast<size_t>(i)].name);
        return out;
    };
    nlohmann::json slow = nlohmann::json::array();
    for (const auto& res : p.results)
        if (p.judged && res.value < p.judgement.threshold)
            slow.push_back(
                {{"nodes", names({res.pair.first, res.pair.second})}, {"value", res.value}});
    return {{"source", p.source},
            {"measurement", p.label},
            {"unit", p.unit},
            {"judged", p.judged},
            {"pairs", p.results.size()},
            {"retests", p.retests.size()},
            {"median", p.judgement.median},
            {"threshold", p.judgement.threshold},
            {"slow", slow},
            {"bad", names(p.bad)},
            {"unresolved", names(p.unresolved)}};
}

// A node's coverage, null for a report that predates it.
nlohmann::json node_coverage_json(const NodeCoverage& c) {
    if (!c.known) return nullptr;
    return {
        {"class", c.label}, {"required", c.required}, {"judged", c.judged}, {"missing", c.missing}};
}

}  // namespace

nlohmann::json fleet_json(const FleetResult& r) {
    nlohmann::json nodes = nlohmann::json::array(), findings = nlohmann::json::array();
    for (const auto& n : r.nodes) {
        nlohmann::json history = nlohmann::json::array();
        for (const auto& e : n.history)
            history.push_back({{"source", e.source},
                               {"written_at", e.written_at},
                               {"verdict", e.verdict},
                               {"failed", e.failed}});
        nodes.push_back({{"name", n.name},
                         {"source", n.source},
                         {"own_verdict", n.own_verdict},
                         {"state", node_state_name(n.state)},
                         {"reasons", n.reasons},
                         {"warnings", n.warnings},
                         {"lemon", n.lemon ? nlohmann::json{{"drains", n.lemon->drains},
                                                            {"reports", n.lemon->reports},
                                                            {"check", n.lemon->check}}
                                           : nlohmann::json(nullptr)},
                         {"history", history},
                         {"coverage", node_coverage_json(n.coverage)}});
    }
    for (const auto& f : r.findings)
        findings.push_back({{"id", f.id},
                            {"kind", f.kind},
                            {"summary", f.summary},
                            {"nodes", f.nodes},
                            {"evidence", f.evidence}});
    nlohmann::json drain = nlohmann::json::array();
    for (const auto& n : r.nodes)
        if (n.state == NodeState::kDrain)
            drain.push_back({{"name", n.name},
                             {"reason", join(n.reasons, "; ")},
                             {"scheduler_reason", scheduler_reason(n)}});
    nlohmann::json set_aside = nlohmann::json::array();
    for (const auto& a : r.set_aside)
        set_aside.push_back({{"name", a.name},
                             {"source", a.source},
                             {"written_at", a.written_at},
                             {"kept", a.kept}});
    nlohmann::json measurements = nlohmann::json::array();
    for (const auto& m : r.measurements)
        measurements.push_back({{"id", m.id},
                                {"label", m.label},
                                {"params", m.params},
                                {"unit", m.unit},
                                {"higher_is_better", m.higher_is_better},
                                {"judged", m.judged},
                                {"nodes", m.nodes},
                                {"count", m.values.size()},
                                {"median", m.median},
                                {"allowed", m.allowed},
                                {"outliers", m.flagged.size()}});
    nlohmann::json doc = {{"schema", "trainrig.fleet"},
                          {"schema_version", 1},
                          {"line", fleet_line(r)},
                          {"counts",
                           {{"ready", r.count(NodeState::kReady)},
                            {"drain", r.count(NodeState::kDrain)},
                            {"drifted", r.count(NodeState::kDrifted)},
                            {"unknown", r.count(NodeState::kUnknown)}}},
                          {"nodes", nodes},
                          {"findings", findings},
                          {"drain", drain},
                          {"measurements", measurements},
                          {"set_aside", set_aside},
                          {"exit_code", r.exit_code()}};
    if (r.pairs) doc["pairs"] = pairs_json(*r.pairs, r);
    return doc;
}

}  // namespace trainrig::fleet

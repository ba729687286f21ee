#include "fleet/fleet_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/quantity.h"
#include "core/text.h"
#include "measure/bench_document.h"
#include "measure/robust_stats.h"

namespace trainrig::fleet {

namespace {

// Nodes grouped by the value each holds for one key (nodes without a value are not counted).
using Groups = std::map<std::string, std::vector<std::string>>;

// What the rules found, by node name, before the nodes' states are decided.
struct Judging {
    std::map<std::string, std::vector<std::string>> drift, shape, slow, pair_bad, pair_unknown;
    std::map<std::string, std::map<std::string, CheckCell>> cells;  // check id -> node -> cell
};

// "outlier.gemm.bf16" from "gemm bf16".
std::string check_id(const char* kind, std::string label) {
    std::replace(label.begin(), label.end(), ' ', '.');
    return std::string(kind) + "." + label;
}

// The value more than half of the nodes that have one hold; empty when none does (a fleet split
// in two: nobody can say which side is wrong).
std::string majority(const Groups& g, size_t holders) {
    for (const auto& [value, nodes] : g)
        if (2 * nodes.size() > holders) return value;
    return "";
}

// Drift and shape: one finding per key on which nodes differ, naming the minority.
void differences(const std::vector<NodeInput>& nodes, const char* kind,
                 std::map<std::string, std::string> NodeInput::*field, FleetResult& out,
                 std::map<std::string, std::vector<std::string>>& reasons, Judging& judging) {
    std::map<std::string, Groups> by_key;
    for (const auto& n : nodes)
        if (n.judged())
            for (const auto& [k, v] : n.*field) by_key[k][v].push_back(n.name);
    if (field == &NodeInput::settings)
        for (auto& [key, groups] : by_key)
            if (key.starts_with("NCCL_"))
                for (const auto& n : nodes)
                    if (n.judged() && n.environment_read && !n.settings.count(key))
                        groups["(unset)"].push_back(n.name);
    for (const auto& [key, groups] : by_key) {
        if (groups.size() < 2) continue;
        size_t holders = 0;
        for (const auto& [v, ns] : groups) holders += ns.size();
        const std::string major = majority(groups, holders);
        FleetFinding f;
        f.id = std::string(kind) + "." + key;
        f.kind = kind;
        auto& cells = judging.cells[f.id];
        const CheckState differs = f.kind == "drift" ? CheckState::kDrifted : CheckState::kDrain;
        for (const auto& [value, ns] : groups) {
            for (const auto& n : ns)
                cells[n] = {major.empty() || value == major ? CheckState::kOk : differs, value};
            f.evidence.push_back(
                fmt::format("{} on {} node{}: {}", value, ns.size(), ns.size() == 1 ? "" : "s",
                            join(std::vector<std::string>(
                                     ns.begin(), ns.begin() + std::min<size_t>(ns.size(), 8)),
                                 ", ") +
                                (ns.size() > 8 ? ", ..." : "")));
            if (major.empty() || value == major) continue;
            for (const auto& n : ns) {
                f.nodes.push_back(n);
                reasons[n].push_back(f.id + " " + value);
            }
        }
        f.summary = major.empty()
                        ? fmt::format("{} differs across the fleet with no majority: {} values",
                                      key, groups.size())
                        : fmt::format("{} differs from the fleet's {} on {} of {} nodes", key,
                                      major, f.nodes.size(), holders);
        out.findings.push_back(std::move(f));
    }
}

// The spread of one measurement: median, tolerance and every value (the judged nodes).
MeasurementSpread spread_of(const std::string& key, const std::vector<const NodeInput*>& measured,
                            const std::vector<const Measurement*>& values, const FleetOptions& o) {
    MeasurementSpread s;
    const Measurement& first = *values.front();
    s.id = check_id("outlier", first.label);
    s.key = key;
    s.label = first.label;
    s.params = first.params;
    s.unit = first.unit;
    s.higher_is_better = first.higher_is_better;
    s.nodes = std::set<const NodeInput*>(measured.begin(), measured.end()).size();
    s.judged = s.nodes >= o.min_nodes;
    for (const auto* m : values) s.values.push_back(m->value);
    s.median = bench::median(s.values);
    const double spread = bench::kMadToSigma * bench::mad(s.values, s.median);
    s.allowed = std::max(o.z * spread, o.min_deviation * std::fabs(s.median));
    return s;
}

void outliers(const std::vector<NodeInput>& nodes, const FleetOptions& o, FleetResult& out,
              std::map<std::string, std::vector<std::string>>& reasons, Judging& judging) {
    std::map<std::string, std::pair<std::vector<const NodeInput*>, std::vector<const Measurement*>>>
        by_key;
    for (const auto& n : nodes)
        if (n.judged())
            for (const auto& m : n.measurements) {
                if (m.samples > 0 && m.samples < o.min_samples) continue;
                by_key[m.key].first.push_back(&n);
                by_key[m.key].second.push_back(&m);
            }
    std::map<std::pair<std::string, std::string>, double> worst;  // (id, node) -> worst deviation
    for (const auto& [key, values] : by_key) {
        const auto& [measured, ms] = values;
        MeasurementSpread s = spread_of(key, measured, ms, o);
        if (!s.judged) {
            out.measurements.push_back(std::move(s));
            continue;
        }
        FleetFinding f;
        f.id = s.id;
        f.kind = "outlier";
        auto& cells = judging.cells[f.id];
        for (size_t i = 0; i < ms.size(); ++i) {
            const NodeInput& node = *measured[i];
            const Measurement& m = *ms[i];
            const double worse = m.higher_is_better ? s.median - m.value : m.value - s.median;
            CheckCell& cell = cells[node.name];
            if (cell.state == CheckState::kAbsent) cell.state = CheckState::kOk;
            if (worse <= s.allowed) continue;
            const double deviation = 100 * (m.value - s.median) / s.median;
            const std::string where = node.name + (m.device.empty() ? "" : " " + m.device);
            f.evidence.push_back(fmt::format("{}: {} ({:+.1f} % against the median)", where,
                                             format_quantity(m.value, m.unit), deviation));
            if (std::find(f.nodes.begin(), f.nodes.end(), node.name) == f.nodes.end())
                f.nodes.push_back(node.name);
            reasons[node.name].push_back(f.id + (m.device.empty() ? "" : " " + m.device));
            s.flagged.push_back({node.name, m.device, m.value});
            double& w = worst.try_emplace({f.id, node.name}, 0.0).first->second;
            if (cell.state != CheckState::kDrain || std::fabs(deviation) > std::fabs(w)) {
                w = deviation;
                cell = {CheckState::kDrain, fmt::format("{:+.1f} %{}", deviation,
                                                        m.device.empty() ? "" : " " + m.device)};
            }
        }
        if (!f.nodes.empty()) {
            f.summary = fmt::format(
                "{}: {} of {} values {} the fleet median {} by more than {} (3 robust "
                "standard deviations, at least {:.0f} %)",
                s.label, f.evidence.size(), ms.size(), s.higher_is_better ? "below" : "above",
                format_quantity(s.median, s.unit), format_quantity(s.allowed, s.unit),
                100 * o.min_deviation);
            out.findings.push_back(std::move(f));
        }
        out.measurements.push_back(std::move(s));
    }
}

// The pair judgement (pair_schedule.h) over the fleet's pairs: a suspect (every pair slow) with a
// slow pair or re-test against a node known good is bad; a suspect whose re-test ran at full
// speed is cleared; the other suspects are not yet known.
void judge_fleet_pairs(FleetPairs& p, const std::vector<NodeInput>& nodes, const FleetOptions& o,
                       FleetResult& out, Judging& judging) {
    const int n = static_cast<int>(nodes.size());
    auto valid = [n](const bench::PairResult& r) {
        return r.pair.first >= 0 && r.pair.second >= 0 && r.pair.first < n && r.pair.second < n &&
               r.pair.first != r.pair.second;
    };
    std::erase_if(p.results, [&](const bench::PairResult& r) { return !valid(r); });
    std::erase_if(p.retests, [&](const bench::PairResult& r) { return !valid(r); });
    p.judged = p.results.size() >= o.min_nodes;
    const std::string id = check_id("pair", p.label);
    auto& cells = judging.cells[id];
    for (const auto* list : {&p.results, &p.retests})
        for (const auto& r : *list)
            for (int i : {r.pair.first, r.pair.second})
                cells[nodes[static_cast<size_t>(i)].name].state = CheckState::kOk;
    if (!p.judged) return;
    p.judgement = bench::judge_pairs(p.results, o.z, o.min_deviation);
    const bench::PairJudgement& j = p.judgement;
    const std::set<int> good(j.good.begin(), j.good.end());
    const std::vector<int> blamed = bench::blame(j, p.retests);
    for (int s : j.suspects) {
        bool bad = std::find(blamed.begin(), blamed.end(), s) != blamed.end(), fast_retest = false;
        for (const auto& r : p.results)
            if ((r.pair.first == s && good.count(r.pair.second)) ||
                (r.pair.second == s && good.count(r.pair.first)))
                bad = true;
        for (const auto& r : p.retests)
            if ((r.pair.first == s || r.pair.second == s) && r.value >= j.threshold)
                fast_retest = true;
        if (bad)
            p.bad.push_back(s);
        else if (!fast_retest)
            p.unresolved.push_back(s);
    }
    if (j.slow.empty()) return;
    FleetFinding f;
    f.id = id;
    f.kind = "pair";
    f.summary = fmt::format(
        "{}: {} of {} node pairs below the pairs' median {} by more than {}; {} node{} to drain, "
        "{} to re-test",
        p.label, j.slow.size(), p.results.size(), format_quantity(j.median, p.unit),
        format_quantity(j.median - j.threshold, p.unit), p.bad.size(), p.bad.size() == 1 ? "" : "s",
        p.unresolved.size());
    auto describe = [&](int s, bool bad) {
        std::vector<double> own;
        size_t slow = 0, with_good = 0;
        for (const auto* list : {&p.results, &p.retests})
            for (const auto& r : *list) {
                if (r.pair.first != s && r.pair.second != s) continue;
                own.push_back(r.value);
                slow += r.value < j.threshold;
                with_good += good.count(r.pair.first == s ? r.pair.second : r.pair.first);
            }
        const std::string& name = nodes[static_cast<size_t>(s)].name;
        const std::string detail =
            bad ? fmt::format("slow with all {} partners, {} known good", own.size(), with_good)
                : fmt::format("every pair slow ({}), none with a node known good: re-test it",
                              own.size());
        f.nodes.push_back(name);
        f.evidence.push_back(
            fmt::format("{}: {} of {} pairs slow, median {} ({:+.1f} % against "
                        "the pairs' median)",
                        name, slow, own.size(), format_quantity(bench::median(own), p.unit),
                        100 * (bench::median(own) - j.median) / j.median));
        (bad ? judging.pair_bad : judging.pair_unknown)[name].push_back(id + " " + detail);
        cells[name] = {bad ? CheckState::kDrain : CheckState::kUnknown,
                       fmt::format("{} of {} slow", slow, own.size())};
    };
    for (int s : p.bad) describe(s, true);
    for (int s : p.unresolved) describe(s, false);
    out.findings.push_back(std::move(f));
}

CheckCell own_verdict_cell(const NodeInput& n) {
    if (!n.problem.empty()) return {CheckState::kUnknown, "unreadable"};
    if (!n.doubt.empty())
        return {CheckState::kUnknown, n.incomplete ? "incomplete" : "changed since written"};
    const CheckState st = n.verdict == "NOT READY" ? CheckState::kDrain
                          : n.verdict == "UNKNOWN" ? CheckState::kUnknown
                                                   : CheckState::kOk;
    return {st, n.verdict};
}

}  // namespace

const char* check_state_name(CheckState s) {
    switch (s) {
        case CheckState::kOk:
            return "ok";
        case CheckState::kDrifted:
            return "drift";
        case CheckState::kDrain:
            return "drain";
        case CheckState::kUnknown:
            return "unknown";
        case CheckState::kAbsent:
            return "none";
    }
    return "none";
}

const char* node_state_name(NodeState s) {
    switch (s) {
        case NodeState::kReady:
            return "READY";
        case NodeState::kDrain:
            return "DRAIN";
        case NodeState::kDrifted:
            return "DRIFTED";
        case NodeState::kUnknown:
            return "UNKNOWN";
    }
    return "UNKNOWN";
}

size_t FleetResult::count(NodeState s) const {
    return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(),
                                             [&](const NodeVerdict& n) { return n.state == s; }));
}

int FleetResult::exit_code() const {
    if (count(NodeState::kUnknown)) return 2;
    return count(NodeState::kDrain) || count(NodeState::kDrifted) ? 1 : 0;
}

namespace {

using validate::HistoryEntry;
using validate::Lemon;

struct NodeHistory {
    std::optional<Lemon> lemon;
    std::vector<HistoryEntry> reports;  // newest first
};

// Each judged node's reports, and the lemons among them: a finding, so that the heat map has a
// column for it and the drain list a reason.
std::map<std::string, NodeHistory> lemons(const std::vector<NodeInput>& nodes,
                                          const std::vector<SetAside>& older,
                                          const validate::LemonOptions& o, FleetResult& out,
                                          Judging& j) {
    std::map<std::string, std::vector<HistoryEntry>> older_of;
    for (const auto& a : older)
        older_of[a.name].push_back({a.source, a.written_at, a.written, a.verdict, a.failed});
    std::map<std::string, NodeHistory> by_node;
    FleetFinding f;
    f.id = f.kind = "lemon";
    for (const auto& n : nodes) {
        if (!n.judged()) continue;
        std::vector<HistoryEntry> history = {
            {n.source, n.written_at, n.written, n.verdict, n.failed}};
        if (auto it = older_of.find(n.name); it != older_of.end())
            history.insert(history.end(), it->second.begin(), it->second.end());
        auto lemon = validate::judge_lemon(history, o);
        if (lemon) {
            f.nodes.push_back(n.name);
            std::vector<std::string> when;
            for (const auto& e : history)
                if (e.drained())
                    when.push_back(
                        fmt::format("{} {}", e.written_at.empty() ? "?" : e.written_at,
                                    e.failed.empty() ? "NOT READY" : join(e.failed, ",")));
            f.evidence.push_back(fmt::format("{}: drained in {} of {} reports: {}", n.name,
                                             lemon->drains, lemon->reports, join(when, "; ")));
            j.cells[f.id][n.name] = {CheckState::kDrain,
                                     fmt::format("{}/{}", lemon->drains, lemon->reports)};
        }
        if (history.size() > 1 || lemon) by_node[n.name] = {lemon, std::move(history)};
    }
    if (!f.nodes.empty()) {
        f.summary = fmt::format(
            "{} node{} drained in at least {} of {} last reports within {:g} days: lemon{}, "
            "drained until repaired",
            f.nodes.size(), f.nodes.size() == 1 ? "" : "s", o.drains,
            f.nodes.size() == 1 ? "its" : "their", o.days, f.nodes.size() == 1 ? "" : "s");
        out.findings.push_back(std::move(f));
    }
    return by_node;
}

// Coverage: the nodes whose own validate did not judge every check their class requires. It
// drains nothing (their own verdict is READY WITH WARNINGS at best, which is READY here too), but
// the fleet report names them, so that a node checked less than the rest cannot pass unseen.
void coverage(const std::vector<NodeInput>& nodes, FleetResult& out, Judging& j) {
    FleetFinding f;
    f.id = f.kind = "coverage";
    for (const auto& n : nodes) {
        if (!n.judged() || !n.coverage.known || n.coverage.missing.empty()) continue;
        f.nodes.push_back(n.name);
        f.evidence.push_back(fmt::format("{}: {} of {} required checks judged ({}); not judged: {}",
                                         n.name, n.coverage.judged, n.coverage.required,
                                         n.coverage.label, join(n.coverage.missing, ", ")));
        j.cells[f.id][n.name] = {CheckState::kDrifted,
                                 fmt::format("{}/{}", n.coverage.judged, n.coverage.required)};
    }
    if (f.nodes.empty()) return;
    f.summary = fmt::format(
        "{} node{} did not judge every check {} class requires: {} verdict{} cannot be a plain "
        "READY; re-run validate there without what kept them out",
        f.nodes.size(), f.nodes.size() == 1 ? "" : "s", f.nodes.size() == 1 ? "its" : "their",
        f.nodes.size() == 1 ? "its" : "their", f.nodes.size() == 1 ? "" : "s");
    out.findings.push_back(std::move(f));
}

}  // namespace

FleetResult judge_fleet(const std::vector<NodeInput>& nodes, const FleetOptions& options,
                        std::optional<FleetPairs> pairs, std::vector<SetAside> older) {
    FleetResult out;
    Judging j;
    auto history = lemons(nodes, older, options.lemon, out, j);
    out.set_aside = std::move(older);
    differences(nodes, "drift", &NodeInput::versions, out, j.drift, j);
    differences(nodes, "drift", &NodeInput::settings, out, j.drift, j);
    differences(nodes, "shape", &NodeInput::shape, out, j.shape, j);
    outliers(nodes, options, out, j.slow, j);
    coverage(nodes, out, j);
    if (pairs) {
        judge_fleet_pairs(*pairs, nodes, options, out, j);
        out.pairs = std::move(pairs);
    }
    out.checks = {"verdict"};
    for (const auto& f : out.findings)
        if (std::find(out.checks.begin(), out.checks.end(), f.id) == out.checks.end())
            out.checks.push_back(f.id);
    for (const auto& n : nodes) {
        NodeVerdict v;
        if (auto it = history.find(n.name); it != history.end()) {
            v.lemon = it->second.lemon;
            v.history = std::move(it->second.reports);
        }
        v.name = n.name;
        v.source = n.source;
        v.own_verdict = n.verdict;
        v.warnings = n.warnings;
        v.coverage = n.coverage;
        auto add = [&](std::map<std::string, std::vector<std::string>>& from) {
            if (auto it = from.find(n.name); it != from.end())
                v.reasons.insert(v.reasons.end(), it->second.begin(), it->second.end());
        };
        if (!n.problem.empty()) {
            v.state = NodeState::kUnknown;
            v.reasons.push_back("unreadable: " + n.problem);
        } else if (!n.doubt.empty()) {
            v.state = NodeState::kUnknown;
            v.reasons.push_back(n.doubt);
        } else if (n.verdict == "NOT READY" || j.shape.count(n.name) || j.slow.count(n.name) ||
                   j.pair_bad.count(n.name) || v.lemon) {
            // Its own failure, hardware unlike the rest, slower than the rest, or failing too
            // often: drain it. A lemon's reason comes first: it is why a node whose newest
            // report passed stays out.
            v.state = NodeState::kDrain;
            if (v.lemon) v.reasons.push_back(validate::lemon_reason(*v.lemon, options.lemon));
            if (n.verdict == "NOT READY")
                v.reasons.insert(v.reasons.end(), n.failed.begin(), n.failed.end());
            add(j.shape);
            add(j.slow);
            add(j.pair_bad);
            if (v.reasons.empty()) v.reasons.push_back("its own verdict is NOT READY");
        } else if (j.drift.count(n.name)) {
            v.state = NodeState::kDrifted;
            add(j.drift);
        } else if (n.verdict == "UNKNOWN" || j.pair_unknown.count(n.name)) {
            v.state = NodeState::kUnknown;
            if (n.verdict == "UNKNOWN") v.reasons.push_back("its own verdict is UNKNOWN");
            add(j.pair_unknown);
        }
        v.cells.push_back(own_verdict_cell(n));
        for (size_t c = 1; c < out.checks.size(); ++c) {
            const auto& column = j.cells[out.checks[c]];
            const auto it = column.find(n.name);
            v.cells.push_back(!n.judged()          ? CheckCell{CheckState::kUnknown, ""}
                              : it != column.end() ? it->second
                                                   : CheckCell{});
        }
        out.nodes.push_back(std::move(v));
    }
    return out;
}

}  // namespace trainrig::fleet

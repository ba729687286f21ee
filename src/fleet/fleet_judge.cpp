#include "fleet/fleet_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/text.h"
#include "fleet/robust_stats.h"

namespace trainrig::fleet {

namespace {

// Nodes grouped by the value each holds for one key (nodes without a value are not counted).
using Groups = std::map<std::string, std::vector<std::string>>;

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
                 std::map<std::string, std::vector<std::string>>& reasons) {
    std::map<std::string, Groups> by_key;
    for (const auto& n : nodes)
        if (n.problem.empty())
            for (const auto& [k, v] : n.*field) by_key[k][v].push_back(n.name);
    for (const auto& [key, groups] : by_key) {
        if (groups.size() < 2) continue;
        size_t holders = 0;
        for (const auto& [v, ns] : groups) holders += ns.size();
        const std::string major = majority(groups, holders);
        FleetFinding f;
        f.id = std::string(kind) + "." + key;
        f.kind = kind;
        for (const auto& [value, ns] : groups) {
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

void outliers(const std::vector<NodeInput>& nodes, const FleetOptions& o, FleetResult& out,
              std::map<std::string, std::vector<std::string>>& reasons) {
    struct Value {
        const NodeInput* node;
        const Measurement* m;
    };
    std::map<std::string, std::vector<Value>> by_key;
    for (const auto& n : nodes)
        if (n.problem.empty())
            for (const auto& m : n.measurements) by_key[m.key].push_back({&n, &m});
    for (const auto& [key, values] : by_key) {
        std::set<const NodeInput*> measured;
        for (const auto& x : values) measured.insert(x.node);
        if (measured.size() < o.min_nodes) continue;
        std::vector<double> v;
        for (const auto& x : values) v.push_back(x.m->value);
        const double med = median(v);
        const double spread = kMadToSigma * mad(v, med);
        const double allowed = std::max(o.z * spread, o.min_deviation * std::fabs(med));
        FleetFinding f;
        const Measurement& first = *values.front().m;
        f.id = "outlier." + first.label;
        std::replace(f.id.begin(), f.id.end(), ' ', '.');
        f.kind = "outlier";
        for (const auto& x : values) {
            const double worse = x.m->higher_is_better ? med - x.m->value : x.m->value - med;
            if (worse <= allowed) continue;
            const std::string where = x.node->name + (x.m->device.empty() ? "" : " " + x.m->device);
            f.evidence.push_back(fmt::format("{}: {:.4g} {} ({:+.1f} % against the median)", where,
                                             x.m->value, x.m->unit,
                                             100 * (x.m->value - med) / med));
            if (std::find(f.nodes.begin(), f.nodes.end(), x.node->name) == f.nodes.end())
                f.nodes.push_back(x.node->name);
            reasons[x.node->name].push_back(f.id + (x.m->device.empty() ? "" : " " + x.m->device));
        }
        if (f.nodes.empty()) continue;
        f.summary = fmt::format(
            "{}: {} of {} values {} the fleet median {:.4g} {} by more than {:.4g} (3 robust "
            "standard deviations, at least {:.0f} %)",
            first.label, f.evidence.size(), values.size(),
            first.higher_is_better ? "below" : "above", med, first.unit, allowed,
            100 * o.min_deviation);
        out.findings.push_back(std::move(f));
    }
}

}  // namespace

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
    if (count(NodeState::kDrain) || count(NodeState::kDrifted)) return 1;
    return count(NodeState::kUnknown) ? 2 : 0;
}

FleetResult judge_fleet(const std::vector<NodeInput>& nodes, const FleetOptions& options) {
    FleetResult out;
    std::map<std::string, std::vector<std::string>> drift, shape, slow;
    differences(nodes, "drift", &NodeInput::versions, out, drift);
    differences(nodes, "drift", &NodeInput::settings, out, drift);
    differences(nodes, "shape", &NodeInput::shape, out, shape);
    outliers(nodes, options, out, slow);
    for (const auto& n : nodes) {
        NodeVerdict v;
        v.name = n.name;
        v.source = n.source;
        v.own_verdict = n.verdict;
        auto add = [&](const std::vector<std::string>& r) {
            v.reasons.insert(v.reasons.end(), r.begin(), r.end());
        };
        if (!n.problem.empty()) {
            v.state = NodeState::kUnknown;
            v.reasons.push_back("unreadable: " + n.problem);
        } else if (n.verdict == "NOT READY" || shape.count(n.name) || slow.count(n.name)) {
            // Its own failure, hardware unlike the rest, or slower than the rest: drain it.
            v.state = NodeState::kDrain;
            add(n.failed);
            if (shape.count(n.name)) add(shape[n.name]);
            if (slow.count(n.name)) add(slow[n.name]);
            if (v.reasons.empty()) v.reasons.push_back("its own verdict is NOT READY");
        } else if (drift.count(n.name)) {
            v.state = NodeState::kDrifted;
            add(drift[n.name]);
        } else if (n.verdict == "UNKNOWN") {
            v.state = NodeState::kUnknown;
            v.reasons.push_back("its own verdict is UNKNOWN");
        }
        out.nodes.push_back(std::move(v));
    }
    return out;
}

}  // namespace trainrig::fleet

#include "slurm/drain_decision.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace trainrig::slurm {

const char* action_name(ActionKind k) {
    switch (k) {
        case ActionKind::kNothing:
            return "nothing";
        case ActionKind::kDrain:
            return "drain";
        case ActionKind::kResume:
            return "resume";
        case ActionKind::kKeep:
            return "keep";
        case ActionKind::kLeave:
            return "leave";
        case ActionKind::kRefuse:
            return "refuse";
    }
    return "nothing";
}

std::string drain_reason(const health::Problem& p, size_t max_chars) {
    const std::string prefix(kReasonPrefix);
    return prefix +
           health::problem_line(p, max_chars > prefix.size() ? max_chars - prefix.size() : 0);
}

namespace {

// The check id of a reason trainrig wrote: "trainrig:gpu.ecc 2 uncorrectable" -> "gpu.ecc".
std::string reason_id(const std::string& reason) {
    const std::string rest = reason.substr(kReasonPrefix.size());
    return rest.substr(0, rest.find(' '));
}

bool shares_partition(const SlurmNode& a, const SlurmNode& b) {
    if (a.partitions.empty()) return true;
    return std::any_of(a.partitions.begin(), a.partitions.end(), [&](const std::string& p) {
        return std::find(b.partitions.begin(), b.partitions.end(), p) != b.partitions.end();
    });
}

}  // namespace

Action decide(const health::HealthResult& health, const SlurmNode& self,
              const std::vector<SlurmNode>& all, const DrainPolicy& policy) {
    const bool ours = self.drained_by_trainrig();
    // A reason someone else set, on a drained or down node: theirs to clear, not ours.
    const bool theirs = !ours && !self.reason.empty();
    // An operator is working on the node: whatever it shows, nothing is drained or resumed.
    if (health.maintenance)
        return {ActionKind::kNothing,
                {},
                fmt::format("{}: {}: nothing is drained or resumed", self.name,
                            maintenance_line(*health.maintenance, health.judged_at))};
    switch (health.health) {
        case health::Health::kUnknown:
            return {ActionKind::kNothing,
                    {},
                    fmt::format("could not judge {} ({}): left as it is", self.name,
                                health.unknowns.empty()
                                    ? std::string("no check ran")
                                    : health::problem_line(health.unknowns.front(), 120))};
        case health::Health::kHealthy:
            if (ours)
                return {
                    ActionKind::kResume,
                    {},
                    fmt::format("{} is healthy again: {} it (drained by trainrig: {})", self.name,
                                policy.dry_run ? "would resume" : "resuming", self.reason)};
            // The health line already says healthy, and there is nothing to do.
            return {ActionKind::kNothing, {}, {}};
        case health::Health::kUnhealthy:
            break;
    }
    const auto& problem = health.failures.front();
    const std::string reason = drain_reason(problem, policy.reason_chars);
    if (theirs)
        return {ActionKind::kLeave,
                {},
                fmt::format("{} fails {}, but its reason '{}' is someone else's: left alone",
                            self.name, problem.id, self.reason)};
    if (ours && reason_id(self.reason) == problem.id)
        return {ActionKind::kKeep, {}, fmt::format("{} stays drained: {}", self.name, self.reason)};
    if (!ours) {
        std::set<std::string> members;
        size_t drained = 0;
        for (const auto& n : all) {
            if (!shares_partition(self, n) || !members.insert(n.name).second) continue;
            if (n.name != self.name && n.drained_by_trainrig()) ++drained;
        }
        members.insert(self.name);
        const double share = static_cast<double>(drained) / static_cast<double>(members.size());
        if (drained > 0 && share >= policy.max_share)
            return {ActionKind::kRefuse,
                    {},
                    fmt::format("{} fails {}, but trainrig already drained {} of the {} nodes of "
                                "its partitions ({:.0f} %, limit {:.0f} %): not draining it; a "
                                "rule may be wrong, check `sinfo -R`",
                                self.name, problem.id, drained, members.size(), 100 * share,
                                100 * policy.max_share)};
    }
    return {
        ActionKind::kDrain, reason,
        fmt::format("{} {}: {}", policy.dry_run ? "would drain" : "draining", self.name, reason)};
}

}  // namespace trainrig::slurm

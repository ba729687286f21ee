// nccl.env: NCCL and PyTorch variables that hurt or do nothing. article §4.2 and its
// Corrections; NCCL's environment-variable documentation; PyTorch's ProcessGroupNCCL.
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/nccl_env_problems.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

void check_env(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.environment, f)) return;
    if (s.environment.is_absent()) return f.raise(FindingStatus::kSkip, "no environment was read");
    const auto& env = s.environment.value();
    std::vector<std::string> remedies;
    for (const auto& p :
         nccl_env_problems(env.vars, s.infiniband.is_known() ? s.infiniband.value()
                                                             : std::vector<std::string>{})) {
        f.evidence.push_back(
            fmt::format("{}: {}={} — {}", env.source, p.key, env.vars.at(p.key), p.why));
        f.raise(p.severe ? FindingStatus::kFail : FindingStatus::kWarn,
                fmt::format("{}={}: {}", p.key, env.vars.at(p.key), p.why));
        remedies.push_back(p.fix);
    }
    if (!remedies.empty()) {
        f.remedy = join(remedies, "; ") + fmt::format(" (set in {})", env.source);
        return;
    }
    std::vector<std::string> names;
    for (const auto& [k, v] : env.vars) names.push_back(k + "=" + v);
    if (!names.empty()) f.evidence.push_back(env.source + ": " + join(names, " "));
    f.raise(FindingStatus::kPass,
            env.vars.empty()
                ? "no NCCL or torch distributed variables set"
                : fmt::format("{} NCCL/torch/CUDA variables, none harmful", env.vars.size()));
}

}  // namespace

std::vector<Rule> nccl_rules() {
    return {
        {"nccl.env",
         "no harmful or non-existent NCCL variables",
         {"training-machine article §4.2 and Corrections", "NCCL docs: Environment Variables",
          "PyTorch: TORCH_NCCL_ASYNC_ERROR_HANDLING"},
         nullptr,
         check_env},
    };
}

}  // namespace trainrig

// nccl.env: NCCL and PyTorch variables that hurt or do nothing. article §4.2 and its
// Corrections; NCCL's environment-variable documentation; PyTorch's ProcessGroupNCCL.
#include <fmt/format.h>

#include <cstdlib>

#include "core/text.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

// NCCL parses these with strtol/strtoll(value, NULL, 0). P2P_DISABLE and SHM_DISABLE act only
// on exactly 1 (ncclGetLevel: `if (disable == 1)`; `ncclParamShmDisable() == 1`); IB_DISABLE
// on any non-zero value. "true" parses as 0 and does nothing.
long long nccl_int(const std::string& v) { return std::strtoll(v.c_str(), nullptr, 0); }

void check_env(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.environment, f)) return;
    if (s.environment.is_absent()) return f.raise(FindingStatus::kSkip, "no environment was read");
    const auto& env = s.environment.value();
    const bool has_ib = s.infiniband.is_known() && !s.infiniband.value().empty();
    std::vector<std::string> remedies;
    auto problem = [&](FindingStatus st, const std::string& key, const std::string& why,
                       const std::string& fix) {
        f.evidence.push_back(fmt::format("{}: {}={} — {}", env.source, key, env.vars.at(key), why));
        f.raise(st, fmt::format("{}={}: {}", key, env.vars.at(key), why));
        remedies.push_back(fix);
    };
    auto get = [&](const char* k) -> const std::string* {
        auto it = env.vars.find(k);
        return it == env.vars.end() ? nullptr : &it->second;
    };
    if (auto v = get("NCCL_P2P_DISABLE"); v && nccl_int(*v) == 1)
        problem(FindingStatus::kFail, "NCCL_P2P_DISABLE",
                "turns off direct GPU-to-GPU transfers, NVLink included", "unset NCCL_P2P_DISABLE");
    if (auto v = get("NCCL_P2P_LEVEL"); v && (trim(*v) == "LOC" || trim(*v) == "0"))
        problem(FindingStatus::kFail, "NCCL_P2P_LEVEL",
                "LOC never uses peer-to-peer, NVLink included",
                "unset NCCL_P2P_LEVEL (NCCL picks the level from the topology)");
    if (auto v = get("NCCL_SHM_DISABLE"); v && nccl_int(*v) == 1)
        problem(FindingStatus::kWarn, "NCCL_SHM_DISABLE",
                "forces intra-node traffic that cannot use P2P onto the network stack",
                "unset NCCL_SHM_DISABLE");
    if (get("NCCL_SOCKET_TIMEOUT"))
        problem(FindingStatus::kWarn, "NCCL_SOCKET_TIMEOUT",
                "NCCL has no such variable; it does nothing",
                "unset NCCL_SOCKET_TIMEOUT; set the timeout in init_process_group(timeout=...)");
    if (get("NCCL_ASYNC_ERROR_HANDLING"))
        problem(
            FindingStatus::kWarn, "NCCL_ASYNC_ERROR_HANDLING",
            "renamed TORCH_NCCL_ASYNC_ERROR_HANDLING (PyTorch >= 2.2); it is a PyTorch variable",
            "rename it to TORCH_NCCL_ASYNC_ERROR_HANDLING");
    if (get("NCCL_BLOCKING_WAIT"))
        problem(FindingStatus::kWarn, "NCCL_BLOCKING_WAIT",
                "renamed TORCH_NCCL_BLOCKING_WAIT (PyTorch >= 2.2)",
                "rename it to TORCH_NCCL_BLOCKING_WAIT");
    if (auto v = get("NCCL_IB_DISABLE"); v && nccl_int(*v) != 0 && has_ib)
        problem(
            FindingStatus::kWarn, "NCCL_IB_DISABLE",
            fmt::format("this machine has InfiniBand ({}); inter-node traffic falls back to TCP "
                        "sockets (it does not \"force NVLink\")",
                        join(s.infiniband.value(), ", ")),
            "unset NCCL_IB_DISABLE");
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

#include "doctor/nccl_env_problems.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/text.h"

namespace trainrig {

namespace {

// NCCL parses these with strtol/strtoll(value, NULL, 0). P2P_DISABLE and SHM_DISABLE act only
// on exactly 1 (ncclGetLevel: `if (disable == 1)`; `ncclParamShmDisable() == 1`); IB_DISABLE
// on any non-zero value. "true" parses as 0 and does nothing.
long long nccl_int(const std::string& v) { return std::strtoll(v.c_str(), nullptr, 0); }

}  // namespace

std::vector<NcclEnvProblem> nccl_env_problems(const std::map<std::string, std::string>& vars,
                                              const std::vector<std::string>& infiniband) {
    std::vector<NcclEnvProblem> out;
    auto get = [&](const char* k) -> const std::string* {
        auto it = vars.find(k);
        return it == vars.end() ? nullptr : &it->second;
    };
    if (auto v = get("NCCL_P2P_DISABLE"); v && nccl_int(*v) == 1)
        out.push_back({"NCCL_P2P_DISABLE", true,
                       "turns off direct GPU-to-GPU transfers, NVLink included",
                       "unset NCCL_P2P_DISABLE", ""});
    if (auto v = get("NCCL_P2P_LEVEL"); v && (trim(*v) == "LOC" || trim(*v) == "0"))
        out.push_back({"NCCL_P2P_LEVEL", true, "LOC never uses peer-to-peer, NVLink included",
                       "unset NCCL_P2P_LEVEL (NCCL picks the level from the topology)", ""});
    if (auto v = get("NCCL_SHM_DISABLE"); v && nccl_int(*v) == 1)
        out.push_back({"NCCL_SHM_DISABLE", false,
                       "forces intra-node traffic that cannot use P2P onto the network stack",
                       "unset NCCL_SHM_DISABLE", ""});
    if (get("NCCL_SOCKET_TIMEOUT"))
        out.push_back({"NCCL_SOCKET_TIMEOUT", false, "NCCL has no such variable; it does nothing",
                       "unset NCCL_SOCKET_TIMEOUT; set the timeout in "
                       "init_process_group(timeout=...)",
                       ""});
    if (get("NCCL_ASYNC_ERROR_HANDLING"))
        out.push_back({"NCCL_ASYNC_ERROR_HANDLING", false,
                       "renamed TORCH_NCCL_ASYNC_ERROR_HANDLING (PyTorch >= 2.2); it is a "
                       "PyTorch variable",
                       "rename it to TORCH_NCCL_ASYNC_ERROR_HANDLING",
                       "TORCH_NCCL_ASYNC_ERROR_HANDLING"});
    if (get("NCCL_BLOCKING_WAIT"))
        out.push_back({"NCCL_BLOCKING_WAIT", false,
                       "renamed TORCH_NCCL_BLOCKING_WAIT (PyTorch >= 2.2)",
                       "rename it to TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT"});
    if (auto v = get("NCCL_IB_DISABLE"); v && nccl_int(*v) != 0 && !infiniband.empty())
        out.push_back({"NCCL_IB_DISABLE", false,
                       fmt::format("this machine has InfiniBand ({}); inter-node traffic falls "
                                   "back to TCP sockets (it does not \"force NVLink\")",
                                   join(infiniband, ", ")),
                       "unset NCCL_IB_DISABLE", ""});
    return out;
}

}  // namespace trainrig

// What is wrong with a set of NCCL/PyTorch variables: the variables that switch transports off,
// do nothing, or were renamed. Shared by the nccl.env rule (which reports them) and the tune
// nccl profile (which removes or renames them). Article §4.2 and its Corrections; NCCL docs
// "Environment Variables"; PyTorch ProcessGroupNCCL.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trainrig {

struct NcclEnvProblem {
    std::string key;
    bool severe = false;  // turns a transport (NVLink, P2P) off: a failure, not a warning
    std::string why;
    std::string fix;        // the remedy sentence
    std::string rename_to;  // non-empty: the variable's current name (same value)
};

std::vector<NcclEnvProblem> nccl_env_problems(const std::map<std::string, std::string>& vars,
                                              const std::vector<std::string>& infiniband);

}  // namespace trainrig

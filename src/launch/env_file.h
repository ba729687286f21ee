// The NCCL environment file `tune` writes (/etc/trainrig/nccl.env) — a shell file of
// `NAME=value` (single-quoted when not plain), `unset NAME` and comments — read without a
// shell, so that `launch` applies exactly it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::launch {

struct EnvOp {
    std::string name;
    bool unset = false;
    std::string value;
};

Result<std::vector<EnvOp>> parse_env_file(std::string_view text, std::string_view where);

}  // namespace trainrig::launch

// Environment files: `NAME=value`, `export NAME=value`, `unset NAME` and comments, read without
// a shell. One reader serves every command: `tune` writes /etc/trainrig/nccl.env in this form,
// `launch` applies it to the job, `doctor`/`tune`/`collect --env-file` judge it. A value is
// plain, single-quoted pieces joined by \' (how tune quotes), or double-quoted with no
// expansion in it; anything a shell would expand ($, `, unquoted spaces, ;) is refused rather
// than guessed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig {

struct EnvOp {
    std::string name;
    bool unset = false;
    std::string value;
};

Result<std::vector<EnvOp>> parse_env_file(std::string_view text, std::string_view where);

// The variables a file leaves set when applied, in order, onto `base`.
std::map<std::string, std::string> apply_env_ops(const std::vector<EnvOp>& ops,
                                                 std::map<std::string, std::string> base = {});

}  // namespace trainrig

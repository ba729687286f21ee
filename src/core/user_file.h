// Reading a file a user named on the command line (--snapshot, --env-file): a regular file,
// read whole, or one sentence saying why not.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace trainrig {

// `option` names the flag in messages ("--snapshot"). Larger than max_bytes is an error.
Result<std::string> read_user_file(const std::string& path, std::string_view option,
                                   size_t max_bytes = 256u << 20);

}  // namespace trainrig

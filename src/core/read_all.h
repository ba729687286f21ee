// Reads an open file descriptor to its end, refusing more than a size limit rather than
// cutting the content. Shared by machine-file reads (RootFs) and user-named files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trainrig {

// Takes ownership of fd (closes it). `what` names the file in error sentences.
Result<std::string> read_all(int fd, std::string_view what, size_t max_bytes);

}  // namespace trainrig

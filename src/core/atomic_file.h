// Writes a file so that readers see either the old content or the whole new content, never a
// part: temp file in the same folder, fsync, rename over the target, fsync the folder.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/status.h"

namespace trainrig {

// mode applies to a newly created file; an existing target keeps its permissions.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         unsigned mode = 0644);

}  // namespace trainrig

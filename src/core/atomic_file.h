// Writes a file so that readers see either the old content or the whole new content, never a
// part: temp file in the same folder, fsync, rename over the target, fsync the folder. A
// symlink is followed to the file it names; a target that is not a regular file (a FIFO, a
// tty) is written into, never replaced; /dev/stdout, /dev/stderr and /dev/fd/N write to this
// process's descriptor (a shell's `>> log` keeps what it had), and nothing under /dev or /proc
// is ever renamed over.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/status.h"

namespace trainrig {

// mode (less the umask) applies to a newly created file; an existing target keeps its mode.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         unsigned mode = 0644);

}  // namespace trainrig

// Reading user-named input files; see user_file.h.
#include "core/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "core/read_all.h"

namespace trainrig {

Result<std::string> read_user_file(const std::string& path, std::string_view option,
                                   size_t max_bytes) {
    const std::string what = fmt::format("{} {}", option, path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno_status(errno, "read", what);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status{Errc::kInvalidInput, fmt::format("cannot read {}: it is not a regular file", what)};
    }
    return read_all(fd, what, max_bytes);
}

}  // namespace trainrig

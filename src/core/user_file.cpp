// Reading user-named input files; see user_file.h.
#include "core/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "core/text.h"

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
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            return errno_status(err, "read", what);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
        if (out.size() > max_bytes) {
            ::close(fd);
            return Status{Errc::kInvalidInput, fmt::format("cannot read {}: it is larger than {}",
                                                           what, human_bytes(max_bytes))};
        }
    }
    ::close(fd);
    return out;
}

}  // namespace trainrig

// read_all(); see read_all.h.
#include "core/read_all.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "core/quantity.h"
#include "core/text.h"

namespace trainrig {

Result<std::string> read_all(int fd, std::string_view what, size_t max_bytes) {
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            // A sysfs attribute that exists but cannot be read on this device reports EIO or
            // ENODEV: surface it as a read failure of that file.
            return errno_status(err, "read", what);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
        if (out.size() > max_bytes) {
            ::close(fd);
            return Status{Errc::kInvalidInput,
                          fmt::format("cannot read {}: it is larger than {}", what,
                                      format_bytes(static_cast<double>(max_bytes)))};
        }
    }
    ::close(fd);
    return out;
}

}  // namespace trainrig

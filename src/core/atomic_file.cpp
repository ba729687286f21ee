// Atomic file replacement; see atomic_file.h.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace trainrig {

namespace {

Status write_all(int fd, std::string_view data, const std::string& what) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_status(errno, "write", what);
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return ok_status();
}

}  // namespace

Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         unsigned mode) {
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const std::string target = path.string();
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        auto why = errno_status(errno, "use folder", dir.string());
        return {why.code(), "cannot write " + target + ": " + why.message().substr(7)};
    }
    if (!S_ISDIR(st.st_mode))
        return {Errc::kInvalidInput,
                "cannot write " + target + ": " + dir.string() + " is not a folder"};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return {Errc::kInvalidInput, "cannot write " + target + ": it is a folder"};
        mode = st.st_mode & 07777;
    }

    std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return errno_status(errno, "create a temporary file in", dir.string());
    auto fail = [&](Status s) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return s;
    };
    if (auto s = write_all(fd, content, target); !s.ok()) return fail(s);
    if (::fchmod(fd, mode) != 0) return fail(errno_status(errno, "set permissions of", target));
    if (::fsync(fd) != 0) return fail(errno_status(errno, "flush", target));
    if (::close(fd) != 0) {
        ::unlink(tmpl.c_str());
        return errno_status(errno, "close", target);
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        return errno_status(err, "replace", target);
    }
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        // The rename is durable only once the folder entry is on disk.
        ::fsync(dfd);
        ::close(dfd);
    }
    return ok_status();
}

}  // namespace trainrig

// Atomic file replacement; see atomic_file.h.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

namespace trainrig {

namespace {

namespace fs = std::filesystem;

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

// /dev/stdout, a FIFO, a terminal: there is no file to replace, so write into it.
Status write_in_place(const fs::path& target, std::string_view content) {
    int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno_status(errno, "write", target.string());
    auto s = write_all(fd, content, target.string());
    if (::close(fd) != 0 && s.ok()) return errno_status(errno, "write", target.string());
    return s;
}

// /dev/stdout, /dev/fd/N, /proc/self/fd/N: one of this process's descriptors, which may be a
// shell's redirection into a regular file. Following the link would find that file and
// replace it (and whatever a `>>` log held before); the descriptor is written instead.
std::optional<int> own_descriptor(const std::string& p) {
    if (p == "/dev/stdout") return 1;
    if (p == "/dev/stderr") return 2;
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        const std::string_view pre(prefix);
        if (p.size() > pre.size() && p.starts_with(pre) &&
            p.find_first_not_of("0123456789", pre.size()) == std::string::npos)
            return std::stoi(p.substr(pre.size()));
    }
    return std::nullopt;
}

mode_t process_umask() {
    mode_t m = ::umask(0);
    ::umask(m);
    return m;
}

}  // namespace

Status write_file_atomic(const fs::path& path, std::string_view content, unsigned mode) {
    if (path.empty()) return {Errc::kInvalidInput, "cannot write a file with an empty name"};
    const std::string typed = path.lexically_normal().string();
    if (auto fd = own_descriptor(typed)) return write_all(*fd, content, typed);
    // Nothing under /dev or /proc is a file of the user's to replace (/dev/null, a tty).
    if (typed.starts_with("/dev/") || typed.starts_with("/proc/"))
        return write_in_place(path, content);
    // Through a symlink, replace the file it names (as an editor does), not the link.
    fs::path target = path;
    std::error_code ec;
    if (fs::is_symlink(path, ec)) {
        auto real = fs::weakly_canonical(path, ec);
        if (ec) return errno_status(ec.value(), "follow the link", path.string());
        target = real;
    }
    const std::string name = target.string();
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return {Errc::kInvalidInput, "cannot write " + name + ": it is a folder"};
        if (!S_ISREG(st.st_mode)) return write_in_place(target, content);
        mode = st.st_mode & 07777;
    } else {
        mode &= ~process_umask();
    }
    const auto dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (::stat(dir.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return {Errc::kNotFound,
                    fmt::format("cannot write {}: folder {} does not exist", name, dir.string())};
        return errno_status(err, "write " + name + " into folder", dir.string());
    }
    if (!S_ISDIR(st.st_mode))
        return {Errc::kInvalidInput,
                fmt::format("cannot write {}: {} is not a folder", name, dir.string())};

    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return errno_status(errno, "create a temporary file in", dir.string());
    auto fail = [&](Status s) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return s;
    };
    if (auto s = write_all(fd, content, name); !s.ok()) return fail(s);
    if (::fchmod(fd, mode) != 0) return fail(errno_status(errno, "set permissions of", name));
    if (::fsync(fd) != 0) return fail(errno_status(errno, "flush", name));
    if (::close(fd) != 0) {
        ::unlink(tmpl.c_str());
        return errno_status(errno, "close", name);
    }
    if (::rename(tmpl.c_str(), target.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        return errno_status(err, "replace", name);
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

// RootFs: root-prefixed, error-returning file access; see root_fs.h.
#include "core/root_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "core/text.h"

namespace trainrig {

namespace fs = std::filesystem;

RootFs::RootFs(fs::path root) : root_(std::move(root)) {
    std::error_code ec;
    auto canon = fs::weakly_canonical(root_, ec);
    if (!ec) root_ = canon;
    live_ = root_ == "/";
}

fs::path RootFs::host_path(std::string_view machine_path) const {
    if (live_) return fs::path(machine_path);
    std::string_view rel = machine_path;
    while (rel.starts_with('/')) rel.remove_prefix(1);
    return root_ / rel;
}

Result<std::string> RootFs::read(std::string_view machine_path, size_t max_bytes) const {
    const auto path = host_path(machine_path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return errno_status(errno, "read", machine_path);
    std::string out;
    char buf[8192];
    while (out.size() < max_bytes) {
        ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            // A sysfs attribute that exists but cannot be read on this device reports EIO or
            // ENODEV: surface it as a read failure of that file.
            return errno_status(err, "read", machine_path);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

Result<std::string> RootFs::read_trimmed(std::string_view machine_path) const {
    auto r = read(machine_path);
    if (!r) return r.status();
    return std::string(trim(*r));
}

Result<std::vector<std::string>> RootFs::list(std::string_view machine_path) const {
    std::error_code ec;
    fs::directory_iterator it(host_path(machine_path), ec);
    if (ec) return errno_status(ec.value(), "list", machine_path);
    std::vector<std::string> names;
    for (const auto& entry : it) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

bool RootFs::exists(std::string_view machine_path) const {
    struct stat st {};
    return ::stat(host_path(machine_path).c_str(), &st) == 0;
}

bool RootFs::is_dir(std::string_view machine_path) const {
    struct stat st {};
    return ::stat(host_path(machine_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> RootFs::link_name(std::string_view machine_path) const {
    std::error_code ec;
    auto target = fs::read_symlink(host_path(machine_path), ec);
    if (ec) return errno_status(ec.value(), "read link", machine_path);
    auto name = target.filename().string();
    if (name.empty()) name = target.parent_path().filename().string();
    return name;
}

Result<std::string> RootFs::resolve(std::string_view machine_path) const {
    std::error_code ec;
    auto canon = fs::canonical(host_path(machine_path), ec);
    if (ec) return errno_status(ec.value(), "resolve", machine_path);
    if (live_) return canon.string();
    auto rel = canon.lexically_relative(root_);
    if (rel.empty() || rel.native().starts_with(".."))
        return Status{Errc::kInvalidInput,
                      std::string(machine_path) + " points outside the machine root"};
    return "/" + rel.string();
}

}  // namespace trainrig

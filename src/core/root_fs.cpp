// RootFs: root-prefixed, error-returning file access; see root_fs.h.
#include "core/root_fs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <system_error>

#include "core/read_all.h"
#include "core/text.h"

namespace trainrig {

namespace fs = std::filesystem;

namespace {
constexpr int kMaxSymlinkHops = 40;  // as the kernel's MAXSYMLINKS
}

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

Result<std::string> RootFs::resolve(std::string_view machine_path) const {
    return resolve_as(machine_path, "resolve");
}

Result<std::string> RootFs::resolve_as(std::string_view machine_path, std::string_view verb) const {
    if (live_) {
        std::error_code ec;
        auto canon = fs::canonical(fs::path(machine_path), ec);
        if (ec) return errno_status(ec.value(), verb, machine_path);
        return canon.string();
    }
    // Walk the path one component at a time, as the kernel would inside a chroot: a relative
    // link continues from its folder, an absolute one from the machine's root, and ".." stops
    // at the root. So a tree's links never lead to the host's files.
    std::deque<std::string> todo;
    for (auto c : split(machine_path, '/'))
        if (!c.empty()) todo.emplace_back(c);
    std::vector<std::string> done;
    int hops = 0;
    while (!todo.empty()) {
        std::string c = std::move(todo.front());
        todo.pop_front();
        if (c == ".") continue;
        if (c == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        done.push_back(c);
        const auto host = root_ / fs::path(join(done, "/"));
        struct stat st {};
        if (::lstat(host.c_str(), &st) != 0) return errno_status(errno, verb, machine_path);
        if (!S_ISLNK(st.st_mode)) continue;
        if (++hops > kMaxSymlinkHops)
            return Status{
                Errc::kInvalidInput,
                fmt::format("cannot {} {}: too many levels of symbolic links", verb, machine_path)};
        std::error_code ec;
        const auto target = fs::read_symlink(host, ec).string();
        if (ec) return errno_status(ec.value(), verb, machine_path);
        done.pop_back();
        if (target.starts_with('/')) done.clear();
        auto parts = split(target, '/');
        for (auto it = parts.rbegin(); it != parts.rend(); ++it)
            if (!it->empty()) todo.emplace_front(*it);
    }
    return "/" + join(done, "/");
}

Result<fs::path> RootFs::locate(std::string_view machine_path, std::string_view verb) const {
    if (live_) return fs::path(machine_path);
    auto real = resolve_as(machine_path, verb);
    if (!real) return real.status();
    return host_path(*real);
}

Result<std::string> RootFs::read(std::string_view machine_path, size_t max_bytes) const {
    auto path = locate(machine_path, "read");
    if (!path) return path.status();
    int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return errno_status(errno, "read", machine_path);
    return read_all(fd, machine_path, max_bytes);
}

Result<std::string> RootFs::read_trimmed(std::string_view machine_path) const {
    auto r = read(machine_path);
    if (!r) return r.status();
    return std::string(trim(*r));
}

Result<std::vector<std::string>> RootFs::list(std::string_view machine_path) const {
    auto path = locate(machine_path, "list");
    if (!path) return path.status();
    std::error_code ec;
    fs::directory_iterator it(*path, ec);
    if (ec) return errno_status(ec.value(), "list", machine_path);
    std::vector<std::string> names;
    for (const auto& entry : it) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

bool RootFs::exists(std::string_view machine_path) const {
    auto path = locate(machine_path, "find");
    struct stat st {};
    return path.ok() && ::stat(path->c_str(), &st) == 0;
}

bool RootFs::is_dir(std::string_view machine_path) const {
    auto path = locate(machine_path, "find");
    struct stat st {};
    return path.ok() && ::stat(path->c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> RootFs::link_name(std::string_view machine_path) const {
    // The link itself is read, not followed: locate its folder, then read it there.
    const auto slash = machine_path.rfind('/');
    const auto dir = machine_path.substr(0, slash == std::string_view::npos ? 0 : slash);
    auto folder = locate(dir.empty() ? "/" : dir, "read link");
    if (!folder) return folder.status();
    std::error_code ec;
    auto target = fs::read_symlink(*folder / std::string(machine_path.substr(slash + 1)), ec);
    if (ec) return errno_status(ec.value(), "read link", machine_path);
    auto name = target.filename().string();
    if (name.empty()) name = target.parent_path().filename().string();
    return name;
}

}  // namespace trainrig

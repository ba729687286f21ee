#include "tune/apply.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/atomic_file.h"
#include "core/text.h"

namespace trainrig::tune {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kManifest = "manifest.json";
constexpr const char* kApplied = "applied";
constexpr const char* kRolledBack = "rolled-back";

// Test hook: TRAINRIG_TUNE_CRASH_AFTER=N kills the process (SIGKILL, no cleanup) once N
// durable steps are done, so tests can stop apply or rollback at every step. It acts only on a
// machine tree (--root), never on the live machine.
bool g_crash_hook = false;

void step_done() {
    static int done = 0;
    static const char* limit = std::getenv("TRAINRIG_TUNE_CRASH_AFTER");
    if (g_crash_hook && limit && ++done >= std::atoi(limit)) ::raise(SIGKILL);
}

// The host path of a machine folder, every symlink followed inside the root (never out of it);
// created, folder by folder, when `create`.
Result<fs::path> folder(const RootFs& rootfs, const std::string& dir, bool create) {
    if (rootfs.is_dir(dir)) {
        auto resolved = rootfs.resolve(dir);
        if (!resolved) return resolved.status();
        return rootfs.host_path(*resolved);
    }
    if (rootfs.exists(dir))
        return Status{Errc::kInvalidInput, fmt::format("{} is not a folder", dir)};
    if (!create) return Status{Errc::kNotFound, fmt::format("{} does not exist", dir)};
    const fs::path p(dir);
    auto parent = folder(rootfs, p.parent_path().string(), true);
    if (!parent) return parent.status();
    const fs::path host = *parent / p.filename();
    if (::mkdir(host.c_str(), 0755) != 0 && errno != EEXIST)
        return errno_status(errno, "create the folder", dir);
    return host;
}

// The host path of a file tune writes. A symbolic link is refused: replacing it would either
// write outside the root or turn the link into a file.
Result<fs::path> file_target(const RootFs& rootfs, const std::string& machine_path) {
    const fs::path p(machine_path);
    auto dir = folder(rootfs, p.parent_path().string(), true);
    if (!dir) return dir.status();
    const fs::path host = *dir / p.filename();
    struct stat st {};
    if (::lstat(host.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return Status{
                Errc::kInvalidInput,
                fmt::format("{} is a symbolic link; tune writes only regular files", machine_path),
                "replace the link with the file it names, or remove it"};
        if (!S_ISREG(st.st_mode))
            return Status{Errc::kInvalidInput,
                          fmt::format("{} is not a regular file", machine_path)};
    }
    return host;
}

Status write_in_place(const fs::path& host, const std::string& value, const std::string& label) {
    // procfs and sysfs files are written where they are; a value is one write.
    int fd = ::open(host.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno_status(errno, "write " + label + " to", host.string());
    const std::string line = value + "\n";
    const ssize_t n = ::write(fd, line.data(), line.size());
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size()))
        return errno_status(n < 0 ? err : EIO, "write " + label + " to", host.string());
    return ok_status();
}

// Writes `value` (a file's content or a live value); none removes the file. A file that had an
// owner and mode before gets them back.
Status write_change(const RootFs& rootfs, const Change& c,
                    const std::optional<std::string>& value) {
    auto host = file_target(rootfs, c.path);
    if (!host) return host.status();
    if (c.kind == Change::Kind::kLive) return write_in_place(*host, value.value_or(""), c.label);
    if (value) {
        TRAINRIG_TRY(write_file_atomic(*host, *value, c.mode ? *c.mode : 0644));
        if (c.mode) {
            if (::chown(host->c_str(), c.uid, c.gid) != 0 && errno != EPERM)
                return errno_status(errno, "restore the owner of", c.path);
            if (::chmod(host->c_str(), *c.mode) != 0)
                return errno_status(errno, "restore the mode of", c.path);
        }
        return ok_status();
    }
    // Restoring "absent": remove the file, and make the removal durable.
    if (::unlink(host->c_str()) != 0 && errno != ENOENT)
        return errno_status(errno, "remove", c.path);
    int dfd = ::open(host->parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return ok_status();
}

std::string read_current(const RootFs& rootfs, const Change& c, bool& exists) {
    auto text = rootfs.read(c.path);
    exists = text.ok();
    if (!text) return "";
    return c.kind == Change::Kind::kLive ? std::string(trim(*text)) : *text;
}

std::string normalize_ws(std::string_view v) {
    std::string out;
    for (auto w : split_ws(v)) {
        if (!out.empty()) out += ' ';
        out += w;
    }
    return out;
}

// The folders apply will create for its files (deepest first), so rollback can remove them.
std::vector<std::string> missing_folders(const RootFs& rootfs, const std::vector<Change>& changes) {
    std::vector<std::string> out;
    for (const auto& c : changes) {
        if (c.kind != Change::Kind::kFile) continue;
        for (fs::path dir = fs::path(c.path).parent_path(); dir != dir.root_path();
             dir = dir.parent_path()) {
            if (rootfs.exists(dir.string())) break;
            if (std::find(out.begin(), out.end(), dir.string()) == out.end())
                out.push_back(dir.string());
        }
    }
    std::sort(out.begin(), out.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    return out;
}

json manifest_of(const std::string& id, const std::vector<Change>& changes,
                 const std::vector<std::string>& created_folders) {
    json items = json::array();
    for (size_t i = 0; i < changes.size(); ++i) {
        const auto& c = changes[i];
        json item = {{"kind", c.kind == Change::Kind::kFile ? "file" : "live"},
                     {"path", c.path},
                     {"label", c.label},
                     {"existed", c.before.has_value()},
                     {"after", c.after}};
        if (c.kind == Change::Kind::kFile) {
            item["backup"] = c.before ? json(fmt::format("items/{}", i)) : json();
            if (c.mode) {
                item["mode"] = *c.mode;
                item["uid"] = c.uid;
                item["gid"] = c.gid;
            }
        } else {
            item["before"] = c.before ? json(*c.before) : json();
        }
        items.push_back(item);
    }
    return {{"schema", "trainrig.tune.backup"},
            {"schema_version", 1},
            {"id", id},
            {"changes", items},
            {"created_folders", created_folders}};
}

struct Backup {
    std::string id;
    fs::path dir;  // host path
    bool complete = false, applied = false, rolled_back = false;
};

// Newest first. The folder is found inside the root (symlinks followed there, never out).
std::vector<Backup> list_backups(const RootFs& rootfs) {
    std::vector<Backup> out;
    auto base = folder(rootfs, kBackupDir, false);
    auto names = rootfs.list(kBackupDir);
    if (!base || !names) return out;
    for (const auto& name : *names) {
        if (name.starts_with(".")) continue;  // the lock
        Backup b{name, *base / name};
        b.complete = fs::exists(b.dir / kManifest);
        b.applied = fs::exists(b.dir / kApplied);
        b.rolled_back = fs::exists(b.dir / kRolledBack);
        out.push_back(b);
    }
    std::sort(out.begin(), out.end(), [](const Backup& a, const Backup& b) { return a.id > b.id; });
    return out;
}

Result<std::vector<Change>> load_manifest(const Backup& b,
                                          std::vector<std::string>* created_folders = nullptr) {
    std::ifstream in(b.dir / kManifest);
    json doc = json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.contains("changes") || !doc["changes"].is_array())
        return Status{Errc::kInvalidInput,
                      fmt::format("backup {}: manifest.json is not valid", b.id)};
    if (created_folders && doc.contains("created_folders"))
        for (const auto& f : doc["created_folders"])
            if (f.is_string() && f.get<std::string>().starts_with("/"))
                created_folders->push_back(f.get<std::string>());
    std::vector<Change> out;
    for (const auto& item : doc["changes"]) {
        if (!item.is_object())
            return Status{Errc::kInvalidInput,
                          fmt::format("backup {}: manifest.json is not valid", b.id)};
        Change c;
        c.kind = item.value("kind", "") == "file" ? Change::Kind::kFile : Change::Kind::kLive;
        c.path = item.value("path", "");
        c.label = item.value("label", "");
        c.after = item.value("after", "");
        if (c.kind == Change::Kind::kLive) {
            if (item.contains("before") && item["before"].is_string())
                c.before = item["before"].get<std::string>();
        } else if (item.contains("backup") && item["backup"].is_string()) {
            std::ifstream f(b.dir / item["backup"].get<std::string>(), std::ios::binary);
            if (!f)
                return Status{Errc::kInvalidInput, fmt::format("backup {}: {} is missing", b.id,
                                                               item["backup"].get<std::string>())};
            c.before = std::string(std::istreambuf_iterator<char>(f), {});
            if (item.contains("mode") && item["mode"].is_number_unsigned()) {
                c.mode = item["mode"].get<unsigned>();
                c.uid = item.value("uid", 0u);
                c.gid = item.value("gid", 0u);
            }
        }
        if (c.path.empty() || !c.path.starts_with("/") || c.path.find("/../") != std::string::npos)
            return Status{Errc::kInvalidInput,
                          fmt::format("backup {}: a change has no usable absolute path", b.id)};
        out.push_back(std::move(c));
    }
    return out;
}

// One apply or rollback at a time: an exclusive lock on the backups folder.
class StoreLock {
public:
    static Result<StoreLock> take(const fs::path& dir) {
        int fd = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return errno_status(errno, "open the lock in", kBackupDir);
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            return Status{Errc::kInvalidInput,
                          "another `trainrig tune apply` or `rollback` is running"};
        }
        return StoreLock(fd);
    }
    StoreLock(StoreLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    ~StoreLock() {
        if (fd_ >= 0) ::close(fd_);
    }

private:
    explicit StoreLock(int fd) : fd_(fd) {}
    int fd_;
};

Status restore(const RootFs& rootfs, const std::vector<Change>& changes, size_t count,
               std::vector<std::string>* labels) {
    for (size_t i = count; i-- > 0;) {
        TRAINRIG_TRY(write_change(rootfs, changes[i], changes[i].before));
        if (labels) labels->push_back(changes[i].label);
        step_done();
    }
    return ok_status();
}

}  // namespace

std::string backup_id_now() {
    const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::vector<Change> plan_changes(const Profile& p, const RootFs& rootfs) {
    std::vector<Change> out;
    for (const auto& f : p.files)
        if (!f.existing || *f.existing != f.proposed)
            out.push_back({Change::Kind::kFile, f.path, f.path, f.existing, f.proposed});
    for (const auto& x : p.settings) {
        if (x.profile == "sysctl" && x.live && normalize_ws(*x.live) != normalize_ws(x.value)) {
            std::string path = "/proc/sys/" + x.key;
            std::replace(path.begin() + 10, path.end(), '.', '/');
            out.push_back({Change::Kind::kLive, path, x.key, x.live, x.value});
        }
        if (x.profile == "cpu" && x.changes()) {
            const std::string base = "/sys/devices/system/cpu/cpufreq";
            auto policies = rootfs.list(base);
            if (!policies) continue;
            for (const auto& policy : *policies) {
                if (!policy.starts_with("policy")) continue;
                const std::string path = base + "/" + policy + "/scaling_governor";
                auto now = rootfs.read_trimmed(path);
                if (now.ok() && *now != x.value)
                    out.push_back({Change::Kind::kLive, path, policy + " scaling_governor",
                                   std::string(*now), x.value});
            }
        }
    }
    return out;
}

Result<ApplyReport> apply_changes(const std::vector<Change>& planned, const RootFs& rootfs,
                                  const std::string& id) {
    g_crash_hook = !rootfs.is_live();
    ApplyReport report;
    report.changes = planned;
    if (planned.empty()) return report;
    auto store = folder(rootfs, kBackupDir, true);
    if (!store) return store.status();
    auto lock = StoreLock::take(*store);
    if (!lock) return lock.status();
    // The folders to create are noted before checking the targets creates them.
    const auto created = missing_folders(rootfs, planned);
    // Every target must be writable as a regular file before anything is saved or changed.
    std::vector<Change> changes = planned;
    for (auto& c : changes) {
        // Nothing is created yet: a missing folder is made when its file is written.
        const fs::path p(c.path);
        auto dir = folder(rootfs, p.parent_path().string(), false);
        if (!dir && dir.status().code() == Errc::kNotFound) continue;
        if (!dir) return dir.status();
        auto host = file_target(rootfs, c.path);
        if (!host) return host.status();
        struct stat st {};
        if (c.kind == Change::Kind::kFile && c.before && ::lstat(host->c_str(), &st) == 0) {
            c.mode = st.st_mode & 07777;
            c.uid = st.st_uid;
            c.gid = st.st_gid;
        }
    }
    // The backup folder, claimed with mkdir: two applies never share one.
    std::string name = id;
    fs::path dir = *store / name;
    for (int n = 2; ::mkdir(dir.c_str(), 0700) != 0; ++n) {
        if (errno != EEXIST || n > 99)
            return errno_status(errno, "create a backup folder in", kBackupDir);
        name = fmt::format("{}-{:02}", id, n);
        dir = *store / name;
    }
    if (::mkdir((dir / "items").c_str(), 0700) != 0)
        return errno_status(errno, "create a backup folder in", kBackupDir);
    // 1. The backup: every file's bytes, then the manifest that makes it complete.
    for (size_t i = 0; i < changes.size(); ++i) {
        if (changes[i].kind != Change::Kind::kFile || !changes[i].before) continue;
        TRAINRIG_TRY(write_file_atomic(dir / fmt::format("items/{}", i), *changes[i].before, 0600));
        step_done();
    }
    TRAINRIG_TRY(write_file_atomic(dir / kManifest,
                                   manifest_of(name, changes, created).dump(2) + "\n", 0600));
    step_done();
    // 2. The changes, each atomic (files) or a single write (live values). A failure undoes
    // the ones made before it.
    for (size_t i = 0; i < changes.size(); ++i) {
        if (auto s = write_change(rootfs, changes[i], changes[i].after); !s.ok()) {
            const bool undone = restore(rootfs, changes, i, nullptr).ok();
            if (undone) (void)write_file_atomic(dir / kRolledBack, backup_id_now() + "\n", 0600);
            return Status{s.code(),
                          s.message() + (undone ? "; the changes made before it were undone"
                                                : "; `trainrig tune rollback` undoes the "
                                                  "changes made before it"),
                          s.next_step()};
        }
        step_done();
    }
    // 3. Done.
    TRAINRIG_TRY(write_file_atomic(dir / kApplied, backup_id_now() + "\n", 0600));
    step_done();
    report.backup_id = name;
    return report;
}

Result<RollbackReport> rollback(const RootFs& rootfs, const std::optional<std::string>& id,
                                bool force) {
    g_crash_hook = !rootfs.is_live();
    RollbackReport report;
    const auto backups = list_backups(rootfs);
    const Backup* chosen = nullptr;
    for (const auto& b : backups) {
        if (id ? b.id == *id : (b.complete && !b.rolled_back)) {
            chosen = &b;
            break;
        }
    }
    if (!chosen) {
        if (id)
            return Status{Errc::kNotFound, fmt::format("no backup {} in {}", *id, kBackupDir),
                          "`trainrig tune status` lists them"};
        report.nothing = backups.empty()
                             ? "no profile has been applied here"
                             : "every applied profile is already rolled back; nothing changed";
        return report;
    }
    report.backup_id = chosen->id;
    if (!chosen->complete) {
        report.nothing = fmt::format(
            "backup {} is incomplete: apply stopped before changing anything", chosen->id);
        return report;
    }
    if (chosen->rolled_back) {
        report.nothing =
            fmt::format("backup {} is already rolled back; nothing changed", chosen->id);
        return report;
    }
    for (const auto& b : backups) {
        if (b.id <= chosen->id) break;
        if (b.complete && !b.rolled_back)
            return Status{Errc::kInvalidInput,
                          fmt::format("backup {} is newer and still applied; roll it back "
                                      "before {}",
                                      b.id, chosen->id)};
    }
    auto store = folder(rootfs, kBackupDir, false);
    if (!store) return store.status();
    auto lock = StoreLock::take(*store);
    if (!lock) return lock.status();
    std::vector<std::string> created;
    auto changes = load_manifest(*chosen, &created);
    if (!changes) return changes.status();
    // A managed file edited since apply is not overwritten silently.
    for (size_t i = 0; i < changes->size(); ++i) {
        const auto& c = (*changes)[i];
        if (c.kind != Change::Kind::kFile) continue;
        bool exists = false;
        const std::string now = read_current(rootfs, c, exists);
        // Unchanged since apply, or not yet changed by an apply that stopped part way.
        if (!exists || now == c.after || (c.before && now == *c.before)) continue;
        if (!force)
            return Status{Errc::kInvalidInput,
                          fmt::format("{} was edited since tune applied it; rollback would "
                                      "discard the edit",
                                      c.path),
                          "`trainrig tune rollback --force` restores it anyway and keeps the "
                          "edited file in the backup"};
        TRAINRIG_TRY(write_file_atomic(chosen->dir / fmt::format("edited-{}", i), now, 0600));
    }
    TRAINRIG_TRY(restore(rootfs, *changes, changes->size(), &report.restored));
    // The folders apply created, if they are empty again (deepest first).
    for (const auto& f : created)
        if (auto host = folder(rootfs, f, false); host.ok()) ::rmdir(host->c_str());
    TRAINRIG_TRY(write_file_atomic(chosen->dir / kRolledBack, backup_id_now() + "\n", 0600));
    step_done();
    return report;
}

Result<StatusReport> tune_status(const RootFs& rootfs) {
    StatusReport report;
    bool drift_checked = false;
    for (const auto& b : list_backups(rootfs)) {
        if (!b.complete) {
            report.lines.push_back(b.id + ": incomplete (apply stopped before changing anything)");
            continue;
        }
        auto changes = load_manifest(b);
        if (!changes) {
            report.lines.push_back(b.id + ": unreadable (" + changes.status().message() + ")");
            continue;
        }
        const bool interrupted = !b.applied && !b.rolled_back;
        report.interrupted |= interrupted;
        report.lines.push_back(fmt::format(
            "{}: {} change(s), {}", b.id, changes->size(),
            b.rolled_back ? "rolled back"
            : b.applied   ? "applied"
                          : "interrupted part way; `trainrig tune rollback` restores the state "
                            "before it"));
        if (drift_checked || !b.applied || b.rolled_back) continue;
        drift_checked = true;
        for (const auto& c : *changes) {
            report.applied.push_back(c.kind == Change::Kind::kLive
                                         ? fmt::format("{} = {}", c.label, normalize_ws(c.after))
                                         : c.path);
            bool exists = false;
            const std::string now = read_current(rootfs, c, exists);
            const bool same = c.kind == Change::Kind::kLive
                                  ? normalize_ws(now) == normalize_ws(c.after)
                                  : exists && now == c.after;
            if (!same)
                report.drift.push_back(
                    c.kind == Change::Kind::kLive
                        ? fmt::format("{} is {}, applied {}", c.label, now, c.after)
                        : fmt::format("{} {} since it was applied", c.path,
                                      exists ? "was edited" : "was removed"));
        }
    }
    return report;
}

}  // namespace trainrig::tune

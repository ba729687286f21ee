#include "tune/apply.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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
// durable steps are done, so tests can stop apply or rollback at every step.
void step_done() {
    static int done = 0;
    static const char* limit = std::getenv("TRAINRIG_TUNE_CRASH_AFTER");
    if (limit && ++done >= std::atoi(limit)) ::raise(SIGKILL);
}

// The host path to write a machine path to, every symlink followed inside the root (never out
// of it); missing folders are created.
Result<fs::path> write_target(const RootFs& rootfs, const std::string& machine_path) {
    const fs::path p(machine_path);
    const std::string parent = p.parent_path().string();
    std::error_code ec;
    fs::create_directories(rootfs.host_path(parent), ec);
    auto dir = rootfs.resolve(parent);
    if (!dir) return dir.status();
    const std::string inside = (fs::path(*dir) / p.filename()).string();
    if (auto resolved = rootfs.resolve(inside); resolved.ok()) return rootfs.host_path(*resolved);
    return rootfs.host_path(inside);
}

Status write_in_place(const fs::path& host, const std::string& value, const std::string& label) {
    // procfs and sysfs files are written where they are; a value is one write.
    int fd = ::open(host.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "write " + label + " to", host.string());
    const std::string line = value + "\n";
    const ssize_t n = ::write(fd, line.data(), line.size());
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size()))
        return errno_status(n < 0 ? err : EIO, "write " + label + " to", host.string());
    return ok_status();
}

Status write_change(const RootFs& rootfs, const Change& c,
                    const std::optional<std::string>& value) {
    auto host = write_target(rootfs, c.path);
    if (!host) return host.status();
    if (c.kind == Change::Kind::kLive) return write_in_place(*host, value.value_or(""), c.label);
    if (value) return write_file_atomic(*host, *value);
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
    auto text = rootfs.read(c.path, 1 << 20);
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
        if (c.kind == Change::Kind::kFile)
            item["backup"] = c.before ? json(fmt::format("items/{}", i)) : json();
        else
            item["before"] = c.before ? json(*c.before) : json();
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

std::vector<Backup> list_backups(const RootFs& rootfs) {
    std::vector<Backup> out;
    auto names = rootfs.list(kBackupDir);
    if (!names) return out;
    for (const auto& name : *names) {
        Backup b{name, rootfs.host_path(std::string(kBackupDir) + "/" + name)};
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
    if (doc.is_discarded() || !doc.contains("changes"))
        return Status{Errc::kInvalidInput,
                      fmt::format("backup {}: manifest.json is not valid", b.id)};
    if (created_folders && doc.contains("created_folders"))
        for (const auto& f : doc["created_folders"])
            if (f.is_string() && f.get<std::string>().starts_with("/"))
                created_folders->push_back(f.get<std::string>());
    std::vector<Change> out;
    for (const auto& item : doc["changes"]) {
        Change c;
        c.kind = item.value("kind", "") == "file" ? Change::Kind::kFile : Change::Kind::kLive;
        c.path = item.value("path", "");
        c.label = item.value("label", "");
        c.after = item.value("after", "");
        if (c.kind == Change::Kind::kLive) {
            if (item["before"].is_string()) c.before = item["before"].get<std::string>();
        } else if (item["backup"].is_string()) {
            std::ifstream f(b.dir / item["backup"].get<std::string>(), std::ios::binary);
            if (!f)
                return Status{Errc::kInvalidInput, fmt::format("backup {}: {} is missing", b.id,
                                                               item["backup"].get<std::string>())};
            c.before = std::string(std::istreambuf_iterator<char>(f), {});
        }
        if (c.path.empty() || !c.path.starts_with("/"))
            return Status{Errc::kInvalidInput,
                          fmt::format("backup {}: a change has no absolute path", b.id)};
        out.push_back(std::move(c));
    }
    return out;
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

Result<ApplyReport> apply_changes(const std::vector<Change>& changes, const RootFs& rootfs,
                                  const std::string& id) {
    ApplyReport report;
    report.changes = changes;
    if (changes.empty()) return report;
    const fs::path dir = rootfs.host_path(std::string(kBackupDir) + "/" + id);
    std::error_code ec;
    if (fs::exists(dir))
        return Status{Errc::kInvalidInput,
                      fmt::format("backup {} already exists in {}", id, kBackupDir)};
    fs::create_directories(dir / "items", ec);
    if (ec)
        return Status{Errc::kIo, fmt::format("cannot create the backup folder {}: {}",
                                             std::string(kBackupDir) + "/" + id, ec.message())};
    // 1. The backup: every file's bytes, then the manifest that makes it complete.
    for (size_t i = 0; i < changes.size(); ++i) {
        if (changes[i].kind != Change::Kind::kFile || !changes[i].before) continue;
        TRAINRIG_TRY(write_file_atomic(dir / fmt::format("items/{}", i), *changes[i].before, 0600));
        step_done();
    }
    TRAINRIG_TRY(write_file_atomic(
        dir / kManifest, manifest_of(id, changes, missing_folders(rootfs, changes)).dump(2) + "\n",
        0600));
    step_done();
    // 2. The changes, each atomic (files) or a single write (live values).
    for (const auto& c : changes) {
        TRAINRIG_TRY(write_change(rootfs, c, c.after));
        step_done();
    }
    // 3. Done.
    TRAINRIG_TRY(write_file_atomic(dir / kApplied, backup_id_now() + "\n", 0600));
    step_done();
    report.backup_id = id;
    return report;
}

Result<RollbackReport> rollback(const RootFs& rootfs, const std::optional<std::string>& id) {
    RollbackReport report;
    const auto backups = list_backups(rootfs);
    const Backup* chosen = nullptr;
    for (const auto& b : backups) {
        if (id ? b.id != *id : !b.complete) continue;
        chosen = &b;
        break;
    }
    if (!chosen) {
        if (id)
            return Status{Errc::kNotFound, fmt::format("no backup {} in {}", *id, kBackupDir),
                          "`trainrig tune status` lists them"};
        report.nothing =
            fmt::format("no applied profile to roll back ({} has no complete backup)", kBackupDir);
        return report;
    }
    report.backup_id = chosen->id;
    if (!chosen->complete) {
        report.nothing = fmt::format(
            "backup {} is incomplete: apply stopped before changing "
            "anything",
            chosen->id);
        return report;
    }
    if (chosen->rolled_back) {
        report.nothing =
            fmt::format("backup {} is already rolled back; nothing changed", chosen->id);
        return report;
    }
    std::vector<std::string> created;
    auto changes = load_manifest(*chosen, &created);
    if (!changes) return changes.status();
    for (auto it = changes->rbegin(); it != changes->rend(); ++it) {
        TRAINRIG_TRY(write_change(rootfs, *it, it->before));
        report.restored.push_back(it->label);
        step_done();
    }
    // The folders apply created, if they are empty again (deepest first).
    for (const auto& folder : created) ::rmdir(rootfs.host_path(folder).c_str());
    TRAINRIG_TRY(write_file_atomic(chosen->dir / kRolledBack, backup_id_now() + "\n", 0600));
    step_done();
    return report;
}

Result<StatusReport> tune_status(const RootFs& rootfs) {
    StatusReport report;
    const auto backups = list_backups(rootfs);
    bool latest = true;
    for (const auto& b : backups) {
        if (!b.complete) {
            report.lines.push_back(b.id + ": incomplete — apply stopped before changing anything");
            continue;
        }
        auto changes = load_manifest(b);
        if (!changes) return changes.status();
        const char* state = b.rolled_back ? "rolled back"
                            : b.applied   ? "applied"
                                          : "interrupted — apply stopped part way; `tune "
                                            "rollback` restores the state before it";
        report.lines.push_back(fmt::format("{}: {}, {} change(s)", b.id, state, changes->size()));
        if (latest && b.applied && !b.rolled_back) {
            for (const auto& c : *changes) {
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
        latest = false;
    }
    return report;
}

}  // namespace trainrig::tune

// Probe of the storage behind a data folder: its mount (from /proc/self/mountinfo), the block
// devices behind that mount (from /sys/dev/block, through partitions, device-mapper and md), and
// its free space (statvfs; on a live machine only, since a fixture tree's space means nothing).
#include <sys/statvfs.h>

#include <filesystem>
#include <set>

#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"
#include "probe/read_fact.h"

namespace trainrig {

namespace {

namespace fs = std::filesystem;

bool under(const std::string& path, const std::string& mount) {
    if (mount == "/") return true;
    return path == mount || (path.starts_with(mount) && path[mount.size()] == '/');
}

std::string disk_kind(const std::string& name, const Fact<int64_t>& rotational) {
    if (name.starts_with("nvme")) return "nvme";
    if (name.starts_with("vd") || name.starts_with("xvd") || name.starts_with("loop") ||
        name.starts_with("zram") || name.starts_with("nbd"))
        return "virtual";
    if (rotational.is_known()) return rotational.value() ? "hdd" : "ssd";
    return "unknown";
}

// Adds the disks behind a /sys/devices/.../block/NAME[/PART] folder, following slaves/.
void add_disks(const RootFs& rfs, const std::string& dir, std::vector<BlockDevice>& out,
               std::set<std::string>& seen, int depth) {
    if (depth > 8 || !seen.insert(dir).second) return;
    std::string disk = dir;
    if (rfs.exists(dir + "/partition")) disk = fs::path(dir).parent_path().string();
    auto slaves = rfs.list(disk + "/slaves");
    if (slaves && !slaves->empty()) {
        for (const auto& s : *slaves) {
            auto target = rfs.resolve(disk + "/slaves/" + s);
            if (target) add_disks(rfs, *target, out, seen, depth + 1);
        }
        return;
    }
    BlockDevice b;
    b.name = sanitize_text(fs::path(disk).filename().string());
    b.rotational = read_i64_fact(rfs, disk + "/queue/rotational");
    b.kind = disk_kind(b.name, b.rotational);
    for (const auto& have : out)
        if (have.name == b.name) return;
    out.push_back(std::move(b));
}

}  // namespace

Fact<DataDir> probe_data_dir(const RootFs& rfs, const std::string& path) {
    DataDir d;
    d.path = path;
    std::error_code ec;
    // The folder as the machine names it, symlinks resolved inside the root.
    std::string machine_path;
    if (rfs.is_live()) {
        auto canon = fs::canonical(path, ec);
        if (ec) return Fact<DataDir>::failed(errno_status(ec.value(), "use --data-dir", path));
        machine_path = canon.string();
    } else {
        auto abs = path.starts_with('/') ? path : "/" + path;
        auto r = rfs.resolve(abs);
        if (!r)
            return Fact<DataDir>::failed(
                {r.status().code(), "--data-dir " + path + " does not exist in the machine tree"});
        machine_path = *r;
    }
    if (!rfs.is_dir(machine_path))
        return Fact<DataDir>::failed(
            {Errc::kInvalidInput, "--data-dir " + path + " is not a folder"});

    auto text = rfs.read("/proc/self/mountinfo");
    if (!text) return Fact<DataDir>::failed(text.status());
    const MountEntry* best = nullptr;
    auto mounts = parse_mountinfo(*text);
    for (const auto& m : mounts)
        if (under(machine_path, m.mount_point) &&
            (!best || m.mount_point.size() >= best->mount_point.size()))
            best = &m;
    if (!best)
        return Fact<DataDir>::failed(
            {Errc::kInvalidInput, "no mount in /proc/self/mountinfo holds " + machine_path});
    d.mount_point = best->mount_point;
    d.fs_type = best->fs_type;
    d.mount_source = best->source;
    d.dev = best->dev;

    if (!best->dev.starts_with("0:")) {  // major 0: no block device (tmpfs, NFS, overlay, ...)
        auto dir = rfs.resolve("/sys/dev/block/" + best->dev);
        std::set<std::string> seen;
        if (dir) add_disks(rfs, *dir, d.devices, seen, 0);
    }
    if (rfs.is_live()) {
        struct statvfs st {};
        if (::statvfs(machine_path.c_str(), &st) == 0) {
            d.free_bytes = Fact<uint64_t>::known(uint64_t(st.f_bavail) * st.f_frsize);
            d.total_bytes = Fact<uint64_t>::known(uint64_t(st.f_blocks) * st.f_frsize);
        } else {
            d.free_bytes = Fact<uint64_t>::failed(errno_status(errno, "statvfs", machine_path));
        }
    }
    return Fact<DataDir>::known(std::move(d));
}

}  // namespace trainrig

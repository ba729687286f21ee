// storage.data-dir: what the training data is read from. article §4.3 (NVMe ~7 GB/s
// instead of SATA; loaders, not GPUs, are the bottleneck).
#include <fmt/format.h>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

constexpr double kMinFreeRatio = 0.10;

bool network_fs(const std::string& t) {
    for (const char* n : {"nfs", "nfs4", "cifs", "smb3", "lustre", "beegfs", "gpfs", "ceph",
                          "glusterfs", "9p", "virtiofs", "wekafs"})
        if (t == n) return true;
    return t.starts_with("fuse.");
}

void check_data_dir(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.data_dir, f)) return;
    const auto& d = s.data_dir.value();
    std::vector<std::string> disks;
    for (const auto& b : d.devices) {
        std::string rot =
            b.rotational.is_known() ? fmt::format(", rotational={}", b.rotational.value()) : "";
        disks.push_back(fmt::format("{} ({}{})", b.name, b.kind, rot));
    }
    f.evidence.push_back(fmt::format("{}: mount {} ({} from {}, device {})", d.path, d.mount_point,
                                     d.fs_type, d.mount_source, d.dev));
    if (!disks.empty()) f.evidence.push_back("disks behind it: " + join(disks, ", "));
    std::string space;
    if (d.free_bytes.is_known() && d.total_bytes.is_known() && d.total_bytes.value() > 0) {
        space =
            fmt::format(", {} free of {}", format_bytes(static_cast<double>(d.free_bytes.value())),
                        format_bytes(static_cast<double>(d.total_bytes.value())));
        f.evidence.push_back("statvfs:" + space.substr(1));
        if (double(d.free_bytes.value()) < kMinFreeRatio * double(d.total_bytes.value()))
            f.raise(FindingStatus::kWarn,
                    fmt::format("{} has less than 10% free space{}", d.path, space));
    }
    f.data = {
        {"path", d.path}, {"mount_point", d.mount_point}, {"fs_type", d.fs_type}, {"disks", disks}};
    for (const auto& b : d.devices) {
        if (b.kind == "hdd")
            f.raise(
                FindingStatus::kWarn,
                fmt::format("{} is on a rotational disk ({}): data loading will starve the GPUs",
                            d.path, b.name));
        else if (b.kind == "ssd")
            f.raise(FindingStatus::kWarn,
                    fmt::format("{} is on a SATA/SAS SSD ({}, ~0.5 GB/s), not NVMe (~7 GB/s)",
                                d.path, b.name));
    }
    if (d.fs_type == "tmpfs")
        f.raise(FindingStatus::kWarn,
                fmt::format("{} is on tmpfs: RAM-backed, lost at reboot", d.path));
    if (f.status == FindingStatus::kWarn) {
        f.remedy =
            "Keep training data (token shards) and checkpoints on local NVMe; measure what you "
            "have with `fio --rw=read --bs=1M --direct=1 --size=16G`.";
        return;
    }
    if (network_fs(d.fs_type))
        return f.raise(
            FindingStatus::kPass,
            fmt::format("{} is on a network filesystem ({}){}: measure its read bandwidth", d.path,
                        d.fs_type, space));
    f.raise(FindingStatus::kPass,
            fmt::format("{} is on {} ({}){}", d.path,
                        disks.empty() ? d.mount_source : join(disks, ", "), d.fs_type, space));
}

}  // namespace

std::vector<Rule> storage_rules() {
    return {
        {"storage.data-dir",
         "training data on fast local storage",
         {"training-machine article §4.3 (NVMe instead of SATA)"},
         [](const Snapshot& s, const RuleOptions&) -> std::optional<std::string> {
             if (s.data_dir.is_absent()) return "no --data-dir given";
             return std::nullopt;
         },
         check_data_dir},
    };
}

}  // namespace trainrig

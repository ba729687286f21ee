// The Snapshot: every fact doctor's rules judge, as read from one machine at one time. Probes fill
// it (probe/collect.h), `trainrig collect` writes it as JSON (schema "trainrig.snapshot"), and
// `doctor --snapshot` judges the JSON with the same rules. Field meanings: docs/formats.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "snapshot/fact.h"
#include "snapshot/gpu_facts.h"

namespace trainrig {

inline constexpr const char* kSnapshotSchema = "trainrig.snapshot";
// Version 2 added nvml, stack, nics, host.uptime_seconds, pci sysfs_path and fabric manager.
inline constexpr int kSnapshotSchemaVersion = 2;

struct HostFacts {
    Fact<std::string> hostname;
    Fact<std::string> kernel_release;  // /proc/sys/kernel/osrelease
    Fact<std::string> cmdline;         // /proc/cmdline
    Fact<double> uptime_seconds;       // /proc/uptime: the window of since-boot counters
    // The firmware's own description (/sys/class/dmi/id, world-readable): what a fleet's
    // machines are and which BIOS they run. Absent where there is no DMI (Arm without SMBIOS).
    Fact<std::string> system_vendor;  // sys_vendor
    Fact<std::string> product_name;   // product_name
    Fact<std::string> bios_version;   // bios_version
    Fact<std::string> bios_date;      // bios_date, MM/DD/YYYY as SMBIOS gives it
    // A virtual machine: the x86 `hypervisor` CPU flag (/proc/cpuinfo). Absent on other
    // architectures and in snapshots written before it was recorded.
    Fact<bool> hypervisor;
    bool operator==(const HostFacts&) const = default;
};

// Live kernel settings, parsed from /proc/sys and /sys/kernel/mm.
struct KernelSettings {
    Fact<int64_t> swappiness;       // vm.swappiness
    Fact<int64_t> numa_balancing;   // kernel.numa_balancing
    Fact<int64_t> file_max;         // fs.file-max
    Fact<int64_t> nr_open;          // fs.nr_open
    Fact<std::string> thp_enabled;  // the bracketed choice of transparent_hugepage/enabled
    Fact<std::string> thp_defrag;   // ... and of transparent_hugepage/defrag
    bool operator==(const KernelSettings&) const = default;
};

// RLIMIT_NOFILE of the process, from /proc/self/limits. kUnlimited for "unlimited".
struct Rlimit {
    static constexpr uint64_t kUnlimited = UINT64_MAX;
    uint64_t soft = 0;
    uint64_t hard = 0;
    bool operator==(const Rlimit&) const = default;
};

// One KEY = VALUE line of a sysctl configuration file.
struct SysctlSetting {
    std::string file;
    int line = 0;
    std::string key;  // dotted form, e.g. "kernel.sched_latency_ns"
    std::string value;
    bool optional = false;  // written with a leading '-': errors are ignored by systemd-sysctl
    bool exists = false;    // /proc/sys has this key on the probed kernel
    bool operator==(const SysctlSetting&) const = default;
};

struct SysctlLine {
    std::string file;
    int line = 0;
    std::string text;
    bool operator==(const SysctlLine&) const = default;
};

// The sysctl files that take effect (sysctl.d(5) order, shadowed names dropped).
struct SysctlConfig {
    bool proc_sys_present = false;  // without /proc/sys no key can be checked
    std::vector<std::string> files;
    std::vector<SysctlSetting> settings;
    std::vector<SysctlLine> malformed;    // lines that are neither comments nor KEY = VALUE
    std::vector<std::string> unreadable;  // "file: reason"
    bool operator==(const SysctlConfig&) const = default;
};

struct EdacController {
    std::string name;  // mc0
    Fact<std::string> mc_name;
    Fact<uint64_t> ce_count;  // corrected errors since boot
    Fact<uint64_t> ue_count;  // uncorrected errors since boot
    bool operator==(const EdacController&) const = default;
};

struct ShmMount {
    uint64_t size_bytes = 0;
    std::string size_origin;  // "size=64m" or "default: half of MemTotal"
    bool operator==(const ShmMount&) const = default;
};

struct MemoryFacts {
    Fact<uint64_t> total_bytes;              // MemTotal
    Fact<std::vector<EdacController>> edac;  // absent: no EDAC in this kernel
    Fact<ShmMount> shm;                      // absent: /dev/shm is not mounted
    bool operator==(const MemoryFacts&) const = default;
};

// One line of a PCI device's sysfs `resource` file; its position is the resource index.
struct PciResource {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t flags = 0;
    bool operator==(const PciResource&) const = default;
};

struct PciDevice {
    std::string address;     // 0000:41:00.0
    std::string sysfs_path;  // /sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0 ("" = unknown)
    Fact<uint64_t> vendor;
    Fact<uint64_t> device;
    Fact<uint64_t> class_code;  // 24-bit class, e.g. 0x030200
    Fact<uint64_t> subsystem_device;
    Fact<std::string> driver;  // bound driver's name; absent = unbound
    Fact<int64_t> numa_node;
    Fact<std::string> local_cpulist;
    Fact<double> current_link_speed;  // GT/s
    Fact<double> max_link_speed;
    Fact<int64_t> current_link_width;  // lanes
    Fact<int64_t> max_link_width;
    Fact<std::vector<PciResource>> resources;
    Fact<std::string> iommu_group_type;  // DMA, DMA-FQ, identity, ...; absent = no IOMMU group
    bool operator==(const PciDevice&) const = default;
};

struct NvidiaDriverFacts {
    bool loaded = false;                  // /proc/driver/nvidia or /sys/module/nvidia exists
    Fact<std::string> version;            // "535.183.01"
    Fact<std::string> version_line;       // first line of /proc/driver/nvidia/version
    Fact<std::vector<std::string>> gpus;  // bus ids listed under /proc/driver/nvidia/gpus
    Fact<bool> fabric_manager_running;    // an nv-fabricmanager process in /proc
    bool operator==(const NvidiaDriverFacts&) const = default;
};

// A kernel log record (/dev/kmsg: "prio,seq,usec,flags;message").
struct KmsgRecord {
    int priority = 0;  // syslog level (facility stripped)
    uint64_t seq = 0;
    uint64_t usec = 0;  // since boot
    std::string message;
    bool operator==(const KmsgRecord&) const = default;
};

// The records that matter to doctor (NVIDIA, PCI resource, AER lines); the rest is counted only.
struct KernelLog {
    uint64_t records_read = 0;
    uint64_t records_lost = 0;  // overwritten in the ring while reading (EPIPE)
    uint64_t malformed = 0;
    std::vector<KmsgRecord> records;
    bool operator==(const KernelLog&) const = default;
};

struct Environment {
    std::string source;                       // "/proc/self/environ" or the --env-file path
    std::map<std::string, std::string> vars;  // NCCL_*, TORCH_NCCL_*, TORCH_DISTRIBUTED_*, CUDA_*
    bool operator==(const Environment&) const = default;
};

struct BlockDevice {
    std::string name;  // nvme0n1, sda, dm-0
    std::string kind;  // nvme, ssd, hdd, virtual, unknown
    Fact<int64_t> rotational;
    bool operator==(const BlockDevice&) const = default;
};

struct DataDir {
    std::string path;
    std::string mount_point;
    std::string fs_type;
    std::string mount_source;
    std::string dev;                   // major:minor
    std::vector<BlockDevice> devices;  // the disks behind it (through partitions, dm, md)
    Fact<uint64_t> free_bytes;
    Fact<uint64_t> total_bytes;
    bool operator==(const DataDir&) const = default;
};

struct NumaNode {
    int os_index = 0;
    std::string cpulist;
    uint64_t memory_bytes = 0;
    bool operator==(const NumaNode&) const = default;
};

// Where hwloc places a PCI device: the NUMA nodes and CPUs of its closest non-I/O ancestor.
struct PciLocality {
    std::string address;
    std::vector<int> numa_nodes;
    std::string cpulist;
    bool operator==(const PciLocality&) const = default;
};

struct Topology {
    int packages = 0;
    int cores = 0;
    int pus = 0;
    std::vector<NumaNode> numa_nodes;
    std::vector<PciLocality> pci_locality;  // NVIDIA devices only
    bool operator==(const Topology&) const = default;
};

// A network adapter on the PCI bus (class 0x02: Ethernet and InfiniBand HCAs), for GPU <-> NIC
// locality.
struct Nic {
    std::string address;
    std::string sysfs_path;
    std::vector<std::string> names;  // infiniband/, net/, virtio*/net/ entries: mlx5_0, ens3
    Fact<uint64_t> vendor;           // 0x15b3 (Mellanox); with device, names a NIC without names
    Fact<uint64_t> device;
    Fact<int64_t> numa_node;
    Fact<std::string> local_cpulist;  // the CPUs nearest the adapter ("0-15")
    // fw_ver of its InfiniBand device (infiniband/<name>/fw_ver, "28.39.1002"); absent for an
    // Ethernet-only function, whose firmware only ethtool's ioctl tells.
    Fact<std::string> firmware;
    bool operator==(const Nic&) const = default;
};

struct Snapshot {
    std::string schema = kSnapshotSchema;
    int schema_version = kSnapshotSchemaVersion;
    std::string trainrig_version;
    std::string collected_at;  // UTC, RFC 3339
    std::string root;          // "/" for a live machine
    HostFacts host;
    KernelSettings kernel;
    Fact<Rlimit> nofile;
    SysctlConfig sysctl;
    Fact<std::map<std::string, int>> cpu_governors;  // governor -> CPUs (policies) using it
    MemoryFacts memory;
    Fact<std::vector<std::string>> iommu_units;  // /sys/class/iommu entries
    Fact<std::vector<PciDevice>> pci_devices;    // NVIDIA functions (vendor 0x10de)
    NvidiaDriverFacts nvidia;
    Fact<KernelLog> kernel_log;
    Fact<Environment> environment;
    Fact<std::vector<std::string>> infiniband;  // /sys/class/infiniband entries
    Fact<DataDir> data_dir;                     // absent: no --data-dir given
    Fact<Topology> topology;
    Fact<std::vector<Nic>> nics;
    // failed kNotFound: no NVML library or the kernel driver is not loaded; failed kUnsupported:
    // not probed (under --root, or a version-1 snapshot); other failures: NVML failed, crashed
    // or did not answer in time.
    Fact<NvmlFacts> nvml;
    Fact<SoftwareStack> stack;  // failed kUnsupported: not probed (under --root)
    bool operator==(const Snapshot&) const = default;
};

nlohmann::json snapshot_to_json(const Snapshot& s);
// The GPU parts alone, for probes that gather them in a child process (probe_nvml.cpp).
// The readers throw nlohmann::json::exception on a malformed document.
nlohmann::json nvml_fact_to_json(const Fact<NvmlFacts>& f);
Fact<NvmlFacts> nvml_fact_from_json(const nlohmann::json& j);
// Reads a snapshot document; `where` names it in error messages (a file path).
Result<Snapshot> snapshot_from_json(const nlohmann::json& j, const std::string& where);
Result<Snapshot> snapshot_from_text(std::string_view text, const std::string& where);

}  // namespace trainrig

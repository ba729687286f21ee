// Probes of NVIDIA PCI functions (sysfs), the NVIDIA kernel driver (/proc/driver/nvidia) and
// class folders such as /sys/class/iommu and /sys/class/infiniband.
#include "core/text.h"
#include "probe/parsers.h"
#include "probe/probes.h"
#include "probe/read_fact.h"

namespace trainrig {

namespace {
constexpr uint64_t kNvidiaVendor = 0x10de;

// Where the /sys/bus/pci/devices link points: the device's place in the PCI hierarchy.
std::string sysfs_path(const RootFs& fs, const std::string& dir) {
    auto real = fs.resolve(dir);
    return real ? sanitize_text(*real) : std::string();
}

PciDevice probe_device(const RootFs& fs, const std::string& address, Fact<uint64_t> vendor) {
    const std::string dir = "/sys/bus/pci/devices/" + address;
    PciDevice d;
    d.address = address;
    d.sysfs_path = sysfs_path(fs, dir);
    d.vendor = std::move(vendor);
    d.device = read_hex_fact(fs, dir + "/device");
    d.class_code = read_hex_fact(fs, dir + "/class");
    d.subsystem_device = read_hex_fact(fs, dir + "/subsystem_device");
    auto driver = fs.link_name(dir + "/driver");
    d.driver = Fact<std::string>::from(std::move(driver));
    d.numa_node = read_i64_fact(fs, dir + "/numa_node");
    d.local_cpulist = read_string_fact(fs, dir + "/local_cpulist");
    d.current_link_speed =
        read_parsed_fact<double>(fs, dir + "/current_link_speed", parse_link_speed);
    d.max_link_speed = read_parsed_fact<double>(fs, dir + "/max_link_speed", parse_link_speed);
    d.current_link_width = read_i64_fact(fs, dir + "/current_link_width");
    d.max_link_width = read_i64_fact(fs, dir + "/max_link_width");
    d.resources =
        read_parsed_fact<std::vector<PciResource>>(fs, dir + "/resource", parse_pci_resource);
    d.iommu_group_type = read_string_fact(fs, dir + "/iommu_group/type");
    return d;
}

// A virtio NIC's interface hangs below the virtio device the PCI function hosts
// (<function>/virtio0/net/eth0), not in the function's own net/ folder.
std::vector<std::string> virtio_interfaces(const RootFs& fs, const std::string& dir) {
    std::vector<std::string> out;
    auto entries = fs.list(dir);
    if (!entries) return out;
    for (const auto& entry : *entries) {
        if (!entry.starts_with("virtio")) continue;
        if (auto names = fs.list(dir + "/" + entry + "/net"))
            for (const auto& name : *names) out.push_back(sanitize_text(name));
    }
    return out;
}
}  // namespace

Fact<std::vector<PciDevice>> probe_nvidia_pci(const RootFs& fs) {
    auto addresses = fs.list("/sys/bus/pci/devices");
    if (!addresses) return Fact<std::vector<PciDevice>>::from(addresses.status());
    std::vector<PciDevice> out;
    for (const auto& address : *addresses) {
        auto vendor = read_hex_fact(fs, "/sys/bus/pci/devices/" + address + "/vendor");
        // A device whose vendor cannot be read might be a GPU: keep it so a rule can say so.
        if (vendor.is_known() && vendor.value() != kNvidiaVendor) continue;
        if (vendor.is_absent()) continue;
        out.push_back(probe_device(fs, address, std::move(vendor)));
    }
    return Fact<std::vector<PciDevice>>::known(std::move(out));
}

Fact<std::vector<std::string>> probe_class_entries(const RootFs& fs, const std::string& dir) {
    auto names = fs.list(dir);
    if (!names) return Fact<std::vector<std::string>>::from(names.status());
    std::vector<std::string> clean;
    for (const auto& n : *names) clean.push_back(sanitize_text(n));
    return Fact<std::vector<std::string>>::known(std::move(clean));
}

NvidiaDriverFacts probe_nvidia_driver(const RootFs& fs) {
    NvidiaDriverFacts d;
    d.loaded = fs.exists("/proc/driver/nvidia") || fs.exists("/sys/module/nvidia");
    auto text = fs.read("/proc/driver/nvidia/version");
    if (text) {
        d.version_line = Fact<std::string>::known(sanitize_text(trim(split(*text, '\n').front())));
        auto v = parse_nvidia_version(*text);
        d.version =
            v ? Fact<std::string>::known(*v)
              : Fact<std::string>::failed(
                    {Errc::kInvalidInput, "/proc/driver/nvidia/version: " + v.status().message()});
    } else {
        d.version = Fact<std::string>::from(text.status());
        d.version_line = Fact<std::string>::from(text.status());
    }
    d.gpus = probe_class_entries(fs, "/proc/driver/nvidia/gpus");
    return d;
}

Fact<std::vector<Nic>> probe_nics(const RootFs& fs) {
    auto addresses = fs.list("/sys/bus/pci/devices");
    if (!addresses) return Fact<std::vector<Nic>>::from(addresses.status());
    std::vector<Nic> out;
    for (const auto& address : *addresses) {
        const std::string dir = "/sys/bus/pci/devices/" + address;
        auto cls = read_hex_fact(fs, dir + "/class");
        if (!cls.is_known() || (cls.value() >> 16) != 0x02) continue;  // network controllers
        Nic n;
        n.address = sanitize_text(address);
        n.sysfs_path = sysfs_path(fs, dir);
        n.vendor = read_hex_fact(fs, dir + "/vendor");
        n.device = read_hex_fact(fs, dir + "/device");
        n.numa_node = read_i64_fact(fs, dir + "/numa_node");
        n.local_cpulist = read_string_fact(fs, dir + "/local_cpulist");
        for (const char* sub : {"/infiniband", "/net"})
            if (auto names = fs.list(dir + sub))
                for (const auto& name : *names) {
                    if (std::string_view(sub) == "/infiniband" && !n.firmware.is_known())
                        n.firmware = read_string_fact(fs, dir + sub + "/" + name + "/fw_ver");
                    n.names.push_back(sanitize_text(name));
                }
        for (const auto& name : virtio_interfaces(fs, dir)) n.names.push_back(name);
        out.push_back(std::move(n));
    }
    return Fact<std::vector<Nic>>::known(std::move(out));
}

Fact<bool> probe_fabric_manager(const RootFs& fs) {
    auto pids = fs.list("/proc");
    if (!pids) return Fact<bool>::from(pids.status());
    for (const auto& pid : *pids) {
        if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
        auto comm = fs.read_trimmed("/proc/" + pid + "/comm");
        // comm is cut to 15 bytes (TASK_COMM_LEN 16): nv-fabricmanager shows as nv-fabricmanage.
        if (comm && (*comm == "nv-fabricmanage" || *comm == "nv-fabricmanager"))
            return Fact<bool>::known(true);
    }
    return Fact<bool>::known(false);
}

}  // namespace trainrig

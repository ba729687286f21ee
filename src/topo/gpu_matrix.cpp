#include "topo/gpu_matrix.h"

#include <fmt/format.h>

#include <map>

#include "core/text.h"
#include "hw/nvidia_gpus.h"
#include "hw/snapshot_gpus.h"

namespace trainrig {

namespace {

// "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0" -> {"pci0000:40", "0000:40:01.1", ...}
std::vector<std::string> components(const std::string& path) {
    std::vector<std::string> out;
    for (auto part : split(path, '/'))
        if (!part.empty() && part != "sys" && part != "devices") out.emplace_back(part);
    return out;
}

int64_t numa_of(const PciDevice* d) {
    return d && d->numa_node.is_known() ? d->numa_node.value() : -1;
}

std::string numa_text(int64_t node) { return node < 0 ? "N/A" : std::to_string(node); }

// Active NVLinks of GPU g: to each remote bus id, and to switches.
struct LinkCounts {
    std::map<std::string, int> to_bus;
    int to_switch = 0;
};

LinkCounts count_links(const NvmlGpu& g) {
    LinkCounts c;
    if (!g.nvlinks.is_known()) return c;
    for (const auto& l : g.nvlinks.value()) {
        if (!l.active) continue;
        if (l.remote_type.is_known() && l.remote_type.value() == "switch")
            ++c.to_switch;
        else if (l.remote_bus_id.is_known())
            ++c.to_bus[l.remote_bus_id.value()];
    }
    return c;
}

// Its interfaces' names; without any (no driver bound), its PCI ids, which still say what it is.
std::string nic_model(const Nic& nic) {
    if (!nic.names.empty()) return join(nic.names, ",");
    if (nic.vendor.is_known() && nic.device.is_known())
        return fmt::format("{:04x}:{:04x}", nic.vendor.value(), nic.device.value());
    return "?";
}

}  // namespace

std::string level_label(const std::string& level) {
    if (level == "INTERNAL") return "X";
    if (level == "SINGLE") return "PIX";
    if (level == "MULTIPLE") return "PXB";
    if (level == "HOSTBRIDGE") return "PHB";
    if (level == "NODE") return "NODE";
    if (level == "SYSTEM") return "SYS";
    return "?";
}

std::string pcie_level(const std::string& path_a, int64_t numa_a, const std::string& path_b,
                       int64_t numa_b) {
    if (path_a.empty() || path_b.empty()) return "";
    auto a = components(path_a), b = components(path_b);
    if (a.empty() || b.empty()) return "";
    if (a.front() != b.front()) {  // different host bridges
        if (numa_a >= 0 && numa_b >= 0) return numa_a == numa_b ? "NODE" : "SYS";
        return "SYS";  // without NUMA facts, assume the worse
    }
    size_t common = 0;
    while (common < a.size() - 1 && common < b.size() - 1 && a[common] == b[common]) ++common;
    if (common <= 1) return "PHB";  // they meet at the root complex
    // Below the shared bridge: a downstream port then the device is one switch (PIX).
    const size_t down = std::max(a.size() - common, b.size() - common);
    return down <= 2 ? "PIX" : "PXB";
}

GpuMatrix build_gpu_matrix(const Snapshot& s) {
    GpuMatrix m;
    std::vector<const NvmlGpu*> nvml;
    if (s.nvml.is_known() && !s.nvml.value().gpus.empty()) {
        m.source = "NVML";
        for (const auto& g : s.nvml.value().gpus) {
            nvml.push_back(&g);
            TopoDevice d;
            d.name = fmt::format("GPU{}", g.index);
            d.bus_id = g.bus_id.is_known() ? g.bus_id.value() : "";
            d.model = g.name.is_known() ? g.name.value() : (g.lost ? "lost" : "?");
            const auto* pci = find_pci_device(s, d.bus_id);
            d.cpus = g.cpu_affinity.is_known()              ? g.cpu_affinity.value()
                     : pci && pci->local_cpulist.is_known() ? pci->local_cpulist.value()
                                                            : "";
            d.numa = numa_text(numa_of(pci));
            m.gpus.push_back(std::move(d));
        }
    } else {
        m.source = "sysfs";
        for (const auto* p : select_gpus(s).gpus) {
            TopoDevice d;
            d.name = fmt::format("GPU{}", m.gpus.size());
            d.bus_id = p->address;
            d.model = p->device.is_known() ? nvidia_gpu_name(p->device.value()) : "?";
            d.cpus = p->local_cpulist.is_known() ? p->local_cpulist.value() : "";
            d.numa = numa_text(numa_of(p));
            m.gpus.push_back(std::move(d));
        }
    }
    const size_t n = m.gpus.size();
    std::vector<LinkCounts> links;
    for (const auto* g : nvml) links.push_back(count_links(*g));
    m.gpu_gpu.assign(n, std::vector<TopoLink>(n));
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) {
            TopoLink& t = m.gpu_gpu[i][j];
            if (i == j) {
                t.label = "X";
                continue;
            }
            const auto* pi = find_pci_device(s, m.gpus[i].bus_id);
            const auto* pj = find_pci_device(s, m.gpus[j].bus_id);
            if (!nvml.empty() && s.nvml.is_known()) {
                for (const auto& p : s.nvml.value().pairs)
                    if ((p.a == static_cast<int>(i) && p.b == static_cast<int>(j)) ||
                        (p.a == static_cast<int>(j) && p.b == static_cast<int>(i)))
                        if (p.level.is_known()) t.pcie = level_label(p.level.value());
            }
            if ((t.pcie.empty() || t.pcie == "?") && pi && pj)
                t.pcie = pcie_level(pi->sysfs_path, numa_of(pi), pj->sysfs_path, numa_of(pj));
            if (!links.empty()) {
                auto it = links[i].to_bus.find(m.gpus[j].bus_id);
                t.nvlinks = it == links[i].to_bus.end() ? 0 : it->second;
                if (t.nvlinks == 0 && links[i].to_switch > 0 && links[j].to_switch > 0) {
                    t.nvlinks = std::min(links[i].to_switch, links[j].to_switch);
                    t.via_switch = true;
                }
            }
            t.label =
                t.nvlinks > 0 ? fmt::format("NV{}", t.nvlinks) : (t.pcie.empty() ? "?" : t.pcie);
        }
    if (s.nics.is_known()) {
        for (const auto& nic : s.nics.value()) {
            TopoDevice d;
            d.name = fmt::format("NIC{}", m.nics.size());
            d.bus_id = nic.address;
            d.model = nic_model(nic);
            d.cpus = nic.local_cpulist.is_known() ? nic.local_cpulist.value() : "";
            d.numa = numa_text(nic.numa_node.is_known() ? nic.numa_node.value() : -1);
            m.nics.push_back(std::move(d));
        }
        m.gpu_nic.assign(n, std::vector<TopoLink>(m.nics.size()));
        for (size_t i = 0; i < n; ++i) {
            const auto* pi = find_pci_device(s, m.gpus[i].bus_id);
            for (size_t k = 0; k < m.nics.size(); ++k) {
                const auto& nic = s.nics.value()[k];
                TopoLink& t = m.gpu_nic[i][k];
                if (pi)
                    t.pcie = pcie_level(pi->sysfs_path, numa_of(pi), nic.sysfs_path,
                                        nic.numa_node.is_known() ? nic.numa_node.value() : -1);
                t.label = t.pcie.empty() ? "?" : t.pcie;
            }
        }
        const auto& nics = s.nics.value();
        m.nic_nic.assign(nics.size(), std::vector<TopoLink>(nics.size()));
        for (size_t a = 0; a < nics.size(); ++a)
            for (size_t b = 0; b < nics.size(); ++b) {
                TopoLink& t = m.nic_nic[a][b];
                if (a == b) {
                    t.label = "X";
                    continue;
                }
                auto node = [](const Nic& x) {
                    return x.numa_node.is_known() ? x.numa_node.value() : int64_t{-1};
                };
                t.pcie = pcie_level(nics[a].sysfs_path, node(nics[a]), nics[b].sysfs_path,
                                    node(nics[b]));
                t.label = t.pcie.empty() ? "?" : t.pcie;
            }
    }
    return m;
}

}  // namespace trainrig

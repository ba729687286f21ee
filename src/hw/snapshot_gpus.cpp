#include "hw/snapshot_gpus.h"

#include <fmt/format.h>

#include "core/text.h"
#include "nvml/nvml_api.h"

namespace trainrig {

GpuSelection select_gpus(const Snapshot& s) {
    GpuSelection sel;
    if (!s.pci_devices.is_known()) return sel;
    for (const auto& d : s.pci_devices.value()) {
        if (!d.vendor.is_known() || !d.class_code.is_known()) {
            sel.unknown.push_back(&d);
            continue;
        }
        if (d.vendor.value() == 0x10de && is_gpu_class(d.class_code.value()))
            sel.gpus.push_back(&d);
    }
    return sel;
}

const PciDevice* find_pci_device(const Snapshot& s, const std::string& address) {
    if (!s.pci_devices.is_known()) return nullptr;
    for (const auto& d : s.pci_devices.value())
        if (d.address == address) return &d;
    return nullptr;
}

std::string gpu_label(const PciDevice& d) {
    if (!d.device.is_known()) return d.address;
    return fmt::format("{} ({})", d.address, nvidia_gpu_name(d.device.value()));
}

std::optional<std::string> driver_unreachable(const Snapshot& s) {
    if (s.nvml.is_absent()) return std::string("NVML was not found");
    if (s.nvml.is_failed() && s.nvml.status().code() == Errc::kNotFound)
        return s.nvml.status().message();
    return std::nullopt;
}

std::optional<std::string> nvml_skip_reason(const Snapshot& s) {
    if (auto why = driver_unreachable(s)) return "no NVIDIA driver: " + *why;
    if (s.nvml.is_failed()) {
        if (s.nvml.status().code() == Errc::kUnsupported) return s.nvml.status().message();
        return std::nullopt;
    }
    if (s.nvml.value().gpus.empty()) return "NVML sees no GPU";
    return std::nullopt;
}

std::string nvml_gpu_label(const NvmlGpu& g) {
    std::string bus = g.bus_id.is_known() ? g.bus_id.value() : "bus id unknown";
    if (g.name.is_known()) return fmt::format("GPU {} ({}, {})", g.index, bus, g.name.value());
    return fmt::format("GPU {} ({})", g.index, bus);
}

bool gpu_busy(const NvmlGpu& g) {
    return g.clock_event_reasons.is_known() &&
           !(g.clock_event_reasons.value() & nvml::kClocksEventGpuIdle);
}

const NvmlGpu* nvml_gpu_at(const Snapshot& s, std::string_view address) {
    if (!s.nvml.is_known()) return nullptr;
    for (const auto& g : s.nvml.value().gpus)
        if (g.bus_id.is_known() && to_lower(g.bus_id.value()) == to_lower(std::string(address)))
            return &g;
    return nullptr;
}

const NvidiaGpuModel* gpu_model(const NvmlGpu& g) {
    return g.pci_device_id.is_known() ? find_nvidia_gpu(g.pci_device_id.value()) : nullptr;
}

std::vector<const NvmlGpu*> answering_gpus(const NvmlFacts& n) {
    std::vector<const NvmlGpu*> out;
    for (const auto& g : n.gpus)
        if (!g.lost && g.unreachable.empty()) out.push_back(&g);
    return out;
}

std::string installed_driver_version(const Snapshot& s) {
    if (s.nvml.is_known() && s.nvml.value().driver_version.is_known())
        return s.nvml.value().driver_version.value();
    return s.nvidia.version.is_known() ? s.nvidia.version.value() : "";
}

int driver_cuda_version(const Snapshot& s) {
    if (s.nvml.is_known() && s.nvml.value().cuda_driver_version.is_known())
        return static_cast<int>(s.nvml.value().cuda_driver_version.value());
    return 0;
}

// NVSwitches are NVIDIA PCI functions of class "bridge, other" (0x0680).
size_t count_nvswitches(const Snapshot& s) {
    size_t k = 0;
    if (!s.pci_devices.is_known()) return 0;
    for (const auto& d : s.pci_devices.value())
        if (d.vendor.is_known() && d.vendor.value() == 0x10de && d.class_code.is_known() &&
            (d.class_code.value() >> 8) == 0x0680)
            ++k;
    return k;
}

}  // namespace trainrig

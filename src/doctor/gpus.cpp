// GPU selection and labels; see gpus.h.
#include "doctor/gpus.h"

#include <fmt/format.h>

#include "core/text.h"
#include "hw/nvidia_gpus.h"

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

std::optional<std::string> no_gpu_reason(const Snapshot& s) {
    if (s.pci_devices.is_failed()) return std::nullopt;  // let the rule report the error
    auto sel = select_gpus(s);
    if (sel.gpus.empty() && sel.unknown.empty()) return "no NVIDIA GPU on the PCI bus";
    return std::nullopt;
}

std::string kmsg_evidence(const KmsgRecord& r) {
    return fmt::format("kernel log [{:.3f} s] {}", static_cast<double>(r.usec) / 1e6, r.message);
}

std::vector<std::string> kmsg_lines_about(const Snapshot& s, const std::string& address,
                                          size_t max_lines) {
    std::vector<std::string> out;
    if (!s.kernel_log.is_known()) return out;
    // Xid lines name the GPU without the function number: "PCI:0000:41:00".
    const std::string short_addr = address.substr(0, address.rfind('.'));
    for (const auto& r : s.kernel_log.value().records) {
        if (!contains(r.message, address) && !contains(r.message, "PCI:" + short_addr + ")"))
            continue;
        out.push_back(kmsg_evidence(r));
        if (out.size() >= max_lines) break;
    }
    return out;
}

}  // namespace trainrig

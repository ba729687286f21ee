#include "doctor/gpus.h"

#include <fmt/format.h>

#include "core/text.h"
#include "hw/nvidia_gpus.h"

namespace trainrig {

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

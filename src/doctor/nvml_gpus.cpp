#include "doctor/nvml_gpus.h"

#include "core/text.h"
#include "nvml/nvml_api.h"

namespace trainrig {

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

const NvmlFacts* need_nvml(const Snapshot& s, Finding& f) {
    if (s.nvml.is_known()) return &s.nvml.value();
    const std::string why =
        s.nvml.is_failed() ? s.nvml.status().message() : std::string("no NVML facts");
    f.raise(FindingStatus::kError, why);
    f.evidence.push_back(why);
    if (why.find("did not answer") != std::string::npos)
        f.remedy =
            "A driver that does not answer is stuck: look for Xid and \"NVRM\" lines in "
            "`dmesg`, try `nvidia-smi` by hand (it will likely hang too), drain the node and "
            "reset the GPU or reboot.";
    return nullptr;
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

}  // namespace trainrig

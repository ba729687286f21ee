// PCI device ids of NVIDIA GPUs. Source: the PCI ID Repository (pci-ids.ucw.cz, vendor 10de),
// memory sizes from NVIDIA's product datasheets (see docs/checks.md, pci.gpu-bar).
#include "hw/nvidia_gpus.h"

#include <fmt/format.h>

#include <array>

namespace trainrig {

namespace {
constexpr std::array kModels = {
    NvidiaGpuModel{0x20b0, "A100-SXM4-40GB", 40, true},
    NvidiaGpuModel{0x20b2, "A100-SXM4-80GB", 80, true},
    NvidiaGpuModel{0x20b5, "A100 80GB PCIe", 80, true},
    NvidiaGpuModel{0x20f1, "A100-PCIE-40GB", 40, true},
    NvidiaGpuModel{0x20f3, "A800-SXM4-80GB", 80, true},
    NvidiaGpuModel{0x20f5, "A800 80GB PCIe", 80, true},
    NvidiaGpuModel{0x2236, "A10", 24, true},
    NvidiaGpuModel{0x2330, "H100 SXM5 80GB", 80, true},
    NvidiaGpuModel{0x2331, "H100 PCIe", 80, true},
    NvidiaGpuModel{0x2321, "H100 NVL", 94, true},
    NvidiaGpuModel{0x2324, "H800", 80, true},
    NvidiaGpuModel{0x2322, "H800 PCIe", 80, true},
    NvidiaGpuModel{0x2335, "H200", 141, true},
    NvidiaGpuModel{0x2342, "GH200 480GB", 96, true},
    NvidiaGpuModel{0x2901, "B200", 180, true},
    NvidiaGpuModel{0x26b9, "L40S", 48, true},
    NvidiaGpuModel{0x26b5, "L40", 48, true},
    NvidiaGpuModel{0x27b8, "L4", 24, true},
    NvidiaGpuModel{0x2684, "GeForce RTX 4090", 24, false},
    NvidiaGpuModel{0x2204, "GeForce RTX 3090", 24, false},
    NvidiaGpuModel{0x2b85, "GeForce RTX 5090", 32, false},
};
}  // namespace

const NvidiaGpuModel* find_nvidia_gpu(uint64_t device_id) {
    for (const auto& m : kModels)
        if (m.device_id == device_id) return &m;
    return nullptr;
}

std::string nvidia_gpu_name(uint64_t device_id) {
    if (const auto* m = find_nvidia_gpu(device_id)) return m->name;
    return fmt::format("NVIDIA GPU 10de:{:04x}", device_id);
}

}  // namespace trainrig

// PCI device ids of NVIDIA GPUs. Source: the PCI ID Repository (pci-ids.ucw.cz, vendor 10de),
// memory sizes from NVIDIA's product datasheets (see docs/checks.md, pci.gpu-bar).
#include "hw/nvidia_gpus.h"

#include <fmt/format.h>

#include <array>

namespace trainrig {

namespace {
// NVLink links: V100 SXM2 6, A100 SXM4 12, H100/H200/B200 SXM 18, A800/H800 8 (400 GB/s, a
// reduced configuration by design); A100/H100 PCIe with bridges: 12 (600 GB/s over links of
// 50 GB/s both directions); RTX 3090 bridge: 4. GH200's 18 links reach other GPUs only through
// an NVLink Switch System, so a node without one is not judged as a board-wired part. Sources:
// nvidia-smi nvlink -s captures in NVIDIA/nccl-tests #228 (A100), NVIDIA/nccl #1264 (H100 NV18),
// deepseek-ai/DeepEP #16 (H800), TensorRT-LLM #19210 (B200); NVIDIA's NVLink product pages for
// bridges. MIG: the parts NVIDIA's Multi-Instance GPU User Guide lists under "Supported GPUs"
// (A100, A800, H100, H800, H200, GH200, B200; not Volta, not the Ada or GeForce parts).
constexpr std::array kModels = {
    NvidiaGpuModel{0x1db1, "V100-SXM2-16GB", 16, true, 6, true},
    NvidiaGpuModel{0x1db4, "V100-PCIE-16GB", 16, true, 0, false},
    NvidiaGpuModel{0x1db5, "V100-SXM2-32GB", 32, true, 6, true},
    NvidiaGpuModel{0x1db6, "V100-PCIE-32GB", 32, true, 0, false},
    NvidiaGpuModel{0x20b0, "A100-SXM4-40GB", 40, true, 12, true, true},
    NvidiaGpuModel{0x20b2, "A100-SXM4-80GB", 80, true, 12, true, true},
    NvidiaGpuModel{0x20b5, "A100 80GB PCIe", 80, true, 12, false, true},
    NvidiaGpuModel{0x20f1, "A100-PCIE-40GB", 40, true, 12, false, true},
    NvidiaGpuModel{0x20f3, "A800-SXM4-80GB", 80, true, 8, true, true},
    NvidiaGpuModel{0x20f5, "A800 80GB PCIe", 80, true, 8, false, true},
    NvidiaGpuModel{0x2236, "A10", 24, true},
    NvidiaGpuModel{0x2330, "H100 SXM5 80GB", 80, true, 18, true, true},
    NvidiaGpuModel{0x2331, "H100 PCIe", 80, true, 12, false, true},
    NvidiaGpuModel{0x2321, "H100 NVL", 94, true, 12, false, true},
    NvidiaGpuModel{0x2324, "H800", 80, true, 8, true, true},
    NvidiaGpuModel{0x2322, "H800 PCIe", 80, true, 8, false, true},
    NvidiaGpuModel{0x2335, "H200", 141, true, 18, true, true},
    NvidiaGpuModel{0x2342, "GH200 480GB", 96, true, 18, false, true},
    NvidiaGpuModel{0x2901, "B200", 180, true, 18, true, true},
    NvidiaGpuModel{0x26b9, "L40S", 48, true},
    NvidiaGpuModel{0x26b5, "L40", 48, true},
    NvidiaGpuModel{0x27b8, "L4", 24, true},
    NvidiaGpuModel{0x2684, "GeForce RTX 4090", 24, false},
    NvidiaGpuModel{0x2204, "GeForce RTX 3090", 24, false, 4, false},
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

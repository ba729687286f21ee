// Sources: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (shared
// memory per SM and the opt-in maximum per block: 164/163 KB on 8.0, 228/227 KB on 9.0); NVIDIA
// A100 Tensor Core GPU Architecture whitepaper (108 SMs, 5120-bit HBM2e, 40 MB L2); NVIDIA H100
// Tensor Core GPU Architecture whitepaper (132 SMs SXM5, 114 PCIe, 5120-bit HBM3, 50 MB L2);
// H200 is the H100 SXM die with 141 GB HBM3e (6144-bit).
#include "runtime/gpu_models.h"

#include <string_view>

namespace trainrig::emu {
namespace {

constexpr size_t KiB = 1024;
constexpr int MiB = 1 << 20;

constexpr GpuModel kModels[] = {
    {"a100-40g-pcie", 8, 0, 108, 163 * KiB, 164 * KiB, 5120, 40 * MiB},
    {"a100-80g-pcie", 8, 0, 108, 163 * KiB, 164 * KiB, 5120, 40 * MiB},
    {"a100-40g-sxm", 8, 0, 108, 163 * KiB, 164 * KiB, 5120, 40 * MiB},
    {"a100-80g-sxm", 8, 0, 108, 163 * KiB, 164 * KiB, 5120, 40 * MiB},
    {"h100-pcie", 9, 0, 114, 227 * KiB, 228 * KiB, 5120, 50 * MiB},
    {"h100-sxm", 9, 0, 132, 227 * KiB, 228 * KiB, 5120, 50 * MiB},
    {"h200-sxm", 9, 0, 132, 227 * KiB, 228 * KiB, 6144, 50 * MiB},
};

}  // namespace

const GpuModel* find_gpu_model(std::string_view id) {
    for (const GpuModel& m : kModels)
        if (id == m.id) return &m;
    return nullptr;
}

const char* gpu_model_ids() {
    return "a100-40g-pcie, a100-80g-pcie, a100-40g-sxm, a100-80g-sxm, h100-pcie, h100-sxm, "
           "h200-sxm";
}

}  // namespace trainrig::emu

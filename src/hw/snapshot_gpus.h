// The NVIDIA GPUs of a snapshot: the PCI functions that are GPUs and how they are named, the
// GPUs as the driver (NVML) reports them, and the driver's own version and CUDA. One place for
// every command that selects or names a GPU or reads the driver: doctor's rules and `stack check`,
// topo's matrix, stack's target, launch's binding, validate and fleet.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hw/nvidia_gpus.h"
#include "snapshot/snapshot.h"

namespace trainrig {

struct GpuSelection {
    std::vector<const PciDevice*> gpus;     // vendor 0x10de, class VGA or 3D controller
    std::vector<const PciDevice*> unknown;  // NVIDIA functions whose class could not be read
};

GpuSelection select_gpus(const Snapshot& s);

// The PCI function at an address ("0000:41:00.0"), nullptr when the list has none (or failed).
const PciDevice* find_pci_device(const Snapshot& s, const std::string& address);

// "0000:41:00.0 (A100-SXM4-80GB)"
std::string gpu_label(const PciDevice& d);

// Why NVML facts cannot be judged: no driver, not probed, or no GPU. nullopt
// when the facts are there, or when NVML failed (the rule then reports the error).
std::optional<std::string> nvml_skip_reason(const Snapshot& s);
// Why no driver answers, when NVML's library is missing or its init says the driver is not
// loaded; nullopt when NVML was read, was not asked (a machine tree) or failed another way.
std::optional<std::string> driver_unreachable(const Snapshot& s);

// "GPU 0 (0000:41:00.0, NVIDIA A100-SXM4-80GB)"
std::string nvml_gpu_label(const NvmlGpu& g);

// Whether the driver says the GPU is working: its clock event reasons are known and lack "GPU
// idle". Unknown counts as idle, so an idle GPU's lowered link speed is never judged.
bool gpu_busy(const NvmlGpu& g);
// The NVML GPU at a PCI address ("0000:41:00.0"), or nullptr.
const NvmlGpu* nvml_gpu_at(const Snapshot& s, std::string_view address);

// The catalog entry of a GPU by its PCI device id, nullptr when unknown.
const NvidiaGpuModel* gpu_model(const NvmlGpu& g);

// The GPUs still answering: not lost, and NVML gave a handle (gpu.count reports the others).
std::vector<const NvmlGpu*> answering_gpus(const NvmlFacts& n);

// The installed driver's version text ("550.54.15"), from NVML or else
// /proc/driver/nvidia/version; empty when neither says.
std::string installed_driver_version(const Snapshot& s);
// The newest CUDA the driver runs (12040), as NVML reports it; 0 when it did not say.
int driver_cuda_version(const Snapshot& s);

// NVSwitches on the PCI bus: NVIDIA functions of class "bridge, other" (0x0680).
size_t count_nvswitches(const Snapshot& s);

}  // namespace trainrig

// The GPUs this process can use, with the facts each record's "target" carries: name and PCI
// address from the CUDA runtime, PCIe link and NUMA node from sysfs (what the kernel negotiated,
// not what NVML reports).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"

namespace trainrig::cuda {

struct GpuInfo {
    int index = 0;  // CUDA device ordinal
    std::string name;
    std::string pci_bus_id;  // sysfs form, lower case: "0000:c1:00.0"
    int cc_major = 0, cc_minor = 0;
    size_t memory_bytes = 0;
    int sm_count = 0;
    int numa_node = -1;                // -1: the kernel does not know
    int pcie_gen = 0, pcie_width = 0;  // current link; 0 unknown
    int pcie_max_gen = 0, pcie_max_width = 0;
};

struct PcieLink {
    int gen = 0, width = 0, max_gen = 0, max_width = 0;
};

// All CUDA devices. Fails with one sentence when there is no driver or no device.
Result<std::vector<GpuInfo>> list_gpus(const RootFs& fs);
// The requested indices (all when empty); an index that is not a device is an error.
Result<std::vector<GpuInfo>> select_gpus(const std::vector<GpuInfo>& all,
                                         const std::vector<int>& requested);

// The link as sysfs has it now. GPUs drop the link to a lower speed when idle, so benchmarks
// read it again while their copies run.
PcieLink read_pcie_link(const RootFs& fs, const std::string& bus_id);
// PCIe generation from the transfer rate in GT/s (2.5 → 1 ... 64 → 6); 0 when unknown.
int pcie_gen_from_gts(double gts);
// NUMA node from /sys/bus/pci/devices/<bus>/numa_node; -1 when absent or unknown.
int read_numa_node(const RootFs& fs, const std::string& bus_id);

// One entry of list()'s "devices".
nlohmann::json device_json(const GpuInfo& g);
// A record's "target" for one GPU, and for several ("gpus": [indices], name of the first).
nlohmann::json target_json(const GpuInfo& g);
nlohmann::json target_json(const std::vector<GpuInfo>& gs);

}  // namespace trainrig::cuda

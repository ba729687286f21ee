// The GPU x GPU (and GPU x NIC) connection matrix that `nvidia-smi topo -m` prints, built from a
// Snapshot: NVLink from NVML's per-link remote ends, PCIe levels from NVML's common-ancestor
// query, or, without NVML, from the devices' places in the sysfs PCI hierarchy.
#pragma once

#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace trainrig {

// nvidia-smi's legend: X (self), NV# (# NVLinks, directly or through NVSwitch), PIX (at most
// one PCIe bridge), PXB (several PCIe bridges), PHB (through a PCIe host bridge), NODE (between
// host bridges of one NUMA node), SYS (across the CPU interconnect).
struct TopoLink {
    std::string label;  // "NV12", "PIX", "SYS", "X", "?"
    int nvlinks = 0;    // active links joining the pair (through a switch: the smaller side)
    bool via_switch = false;
    std::string pcie;  // the PCIe level label alone ("NODE"), "" when unknown
};

struct TopoDevice {
    std::string name;  // GPU0, NIC0
    std::string bus_id;
    std::string model;  // GPU name or the NIC's net/infiniband names
    std::string cpus;   // CPU affinity
    std::string numa;   // NUMA node, "N/A" when unknown
};

struct GpuMatrix {
    std::vector<TopoDevice> gpus;
    std::vector<TopoDevice> nics;
    std::vector<std::vector<TopoLink>> gpu_gpu;  // [i][j]
    std::vector<std::vector<TopoLink>> gpu_nic;  // [gpu][nic]
    std::vector<std::vector<TopoLink>> nic_nic;  // [nic][nic]
    std::string source;                          // "NVML" or "sysfs"
};

GpuMatrix build_gpu_matrix(const Snapshot& s);

// The PCIe level between two devices from their sysfs paths and NUMA nodes (-1 unknown).
std::string pcie_level(const std::string& path_a, int64_t numa_a, const std::string& path_b,
                       int64_t numa_b);

// NVML's level word ("SINGLE") as nvidia-smi's label ("PIX").
std::string level_label(const std::string& nvml_level);

}  // namespace trainrig

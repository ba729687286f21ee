// Which PCI functions of a snapshot are NVIDIA GPUs, and how rules name them.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

// Skip reason shared by the GPU rules: set when the snapshot has no NVIDIA GPU.
std::optional<std::string> no_gpu_reason(const Snapshot& s);

// One kernel log record as an evidence line: "kernel log [12.345 s] message".
std::string kmsg_evidence(const KmsgRecord& r);

// Kernel log lines that mention a PCI address ("0000:41:00.0" or the Xid form "0000:41:00").
std::vector<std::string> kmsg_lines_about(const Snapshot& s, const std::string& address,
                                          size_t max_lines);

}  // namespace trainrig

// What doctor's rules share about GPUs on the PCI bus (hw/snapshot_gpus.h selects and names
// them): the reason a GPU rule skips, and the kernel log lines about a GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/snapshot_gpus.h"
#include "snapshot/snapshot.h"

namespace trainrig {

// Skip reason shared by the GPU rules: set when the snapshot has no NVIDIA GPU.
std::optional<std::string> no_gpu_reason(const Snapshot& s);

// One kernel log record as an evidence line: "kernel log [12.345 s] message".
std::string kmsg_evidence(const KmsgRecord& r);

// Kernel log lines that mention a PCI address ("0000:41:00.0" or the Xid form "0000:41:00").
std::vector<std::string> kmsg_lines_about(const Snapshot& s, const std::string& address,
                                          size_t max_lines);

}  // namespace trainrig

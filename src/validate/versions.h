// What a machine runs, by name: the kernel, driver and CUDA driver always (null when unknown),
// then what is known of the system and BIOS (DMI), the InfiniBand adapters' firmware, the CUDA
// runtime, NCCL, nvcc and PyTorch. The report's `versions` (docs/report.md) and what `fleet`
// compares across nodes: one reading for both.
#pragma once

#include <nlohmann/json.hpp>

#include "snapshot/snapshot.h"

namespace trainrig::validate {

nlohmann::json machine_versions(const Snapshot& s);

}  // namespace trainrig::validate

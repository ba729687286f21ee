// Reads every GPU fact the Snapshot keeps from a loaded NVML (init ... shutdown). Runs in the
// child process of probe_nvml.cpp, so a hung or crashing driver cannot take trainrig with it;
// the channel names each call before it is made.
#pragma once

#include <string>
#include <string_view>

#include "core/child_process.h"
#include "nvml/nvml_library.h"
#include "snapshot/gpu_facts.h"

namespace trainrig::nvml {

// Failed with kNotFound when the kernel driver is not loaded, kIo when init or the count failed.
Fact<NvmlFacts> read_nvml(const Library& lib, IsolatedChannel& channel);

// "00000000:C1:00.0" (NVML) -> "0000:c1:00.0" (sysfs); unchanged when it is not of that form.
std::string normalize_bus_id(std::string_view nvml_bus_id);

// The bits of an nvmlDeviceGetCpuAffinity mask as a cpulist.
std::string cpu_mask_to_list(const unsigned long* words, size_t count);

// NVML's topology level as the word the Snapshot keeps ("NODE"); "LEVEL_<n>" when unknown.
std::string topology_level_name(int level);

}  // namespace trainrig::nvml

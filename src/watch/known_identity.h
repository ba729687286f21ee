// The identity of a GPU that NVML no longer describes (lost before watch started): NVML answers
// GPU_IS_LOST for its name, UUID and bus id, yet its series, alerts and Xids still need to say
// which GPU it is. The last known identity comes from the NVIDIA driver's own files or from the
// watch history.
#pragma once

#include <vector>

#include "core/root_fs.h"
#include "watch/gpu_sample.h"

namespace trainrig::watch {

// Fills the empty uuid, name and bus id of each GPU from `known`, matched by index.
void fill_identities(std::vector<GpuIdentity>& gpus, const std::vector<GpuIdentity>& known);

// The GPUs the driver initialised, from /proc/driver/nvidia/gpus/<bus id>/information ("Model",
// "GPU UUID", "Bus Location"), in bus order; empty without the driver.
std::vector<GpuIdentity> driver_identities(const RootFs& fs);

// Gives the GPUs without a bus id the driver's GPUs that no other GPU claims. NVML numbers GPUs
// in bus order, so these are matched in order, and only when there are exactly as many of each:
// otherwise which is which is not known, and nothing is filled.
void fill_from_driver(std::vector<GpuIdentity>& gpus, const std::vector<GpuIdentity>& driver);

}  // namespace trainrig::watch

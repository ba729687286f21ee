// One GPU's telemetry read through NVML: the calls a tick makes, in order.
#pragma once

#include <atomic>

#include "nvml/nvml_library.h"
#include "watch/gpu_sample.h"

namespace trainrig::watch {

// Reads every field of GpuSample. NOT_SUPPORTED and missing entry points leave a field empty;
// GPU_IS_LOST stops the read and marks the GPU lost; any other failure marks it kError with the
// first failing call named, and the read goes on. Names each call in `step` before making it.
GpuSample read_gpu_sample(const nvml::Library& lib, nvml::Device device, unsigned index,
                          std::atomic<const char*>& step);

}  // namespace trainrig::watch

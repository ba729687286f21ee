// The GPUs an emulated device can claim to be, by plan's catalog id: what the CUDA runtime
// reports of them that the catalog does not hold (compute capability, SMs, shared memory).
#pragma once

#include <cstddef>
#include <string_view>

namespace trainrig::emu {

struct GpuModel {
    const char* id;  // plan's GPU catalog id (src/plan/hardware_catalog.cpp)
    int major, minor;
    int sms;
    size_t shared_per_block_optin;  // bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin
    size_t shared_per_sm;           // bytes
    int memory_bus_bits;
    int l2_bytes;
};

// nullptr when the id is not one of them.
const GpuModel* find_gpu_model(std::string_view id);
// The ids, comma-separated, for an error message.
const char* gpu_model_ids();

}  // namespace trainrig::emu

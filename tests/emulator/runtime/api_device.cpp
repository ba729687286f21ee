// Devices, their properties and peers, synchronisation and errors.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "runtime/api_common.h"
#include "runtime/stream.h"

using namespace trainrig::emu;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
    const auto& gpus = Emulator::get().gpus();
    *count = static_cast<int>(gpus.size());
    return gpus.empty() ? set_last_error(cudaErrorNoDevice) : cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    if (Emulator::get().gpu(device) == nullptr) return set_last_error(cudaErrorInvalidDevice);
    Emulator::get().current_index() = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    *device = Emulator::get().current_index();
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    EmulatedGpu* g = Emulator::get().gpu(device);
    if (g == nullptr) return set_last_error(cudaErrorInvalidDevice);
    const GpuModel& m = *g->model;
    std::memset(prop, 0, sizeof *prop);
    std::snprintf(prop->name, sizeof prop->name, "%s", g->name.c_str());
    for (int i = 0; i < 16; ++i)  // a stable UUID per bus id
        prop->uuid.bytes[i] =
            static_cast<char>((g->domain * 131 + g->bus * 17 + g->device + i * 29) & 0xff);
    prop->totalGlobalMem = g->memory;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->sharedMemPerBlockOptin = m.shared_per_block_optin;
    prop->sharedMemPerMultiprocessor = m.shared_per_sm;
    prop->reservedSharedMemPerBlock = 1024;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->maxBlocksPerMultiProcessor = 32;
    prop->totalConstMem = 64 * 1024;
    prop->major = m.major;
    prop->minor = m.minor;
    prop->multiProcessorCount = m.sms;
    prop->pciDomainID = g->domain;
    prop->pciBusID = g->bus;
    prop->pciDeviceID = g->device;
    prop->memoryBusWidth = m.memory_bus_bits;
    prop->l2CacheSize = m.l2_bytes;
    prop->concurrentKernels = 1;
    prop->asyncEngineCount = 2;
    prop->unifiedAddressing = 1;
    prop->canMapHostMemory = 1;
    prop->ECCEnabled = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    cudaDeviceProp p;
    if (const cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess) return e;
    switch (attr) {
        case cudaDevAttrMaxSharedMemoryPerBlockOptin:
            *value = static_cast<int>(p.sharedMemPerBlockOptin);
            return cudaSuccess;
        case cudaDevAttrMultiProcessorCount:
            *value = p.multiProcessorCount;
            return cudaSuccess;
        case cudaDevAttrComputeCapabilityMajor:
            *value = p.major;
            return cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor:
            *value = p.minor;
            return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerBlock:
            *value = static_cast<int>(p.sharedMemPerBlock);
            return cudaSuccess;
        default:
            return set_last_error(cudaErrorInvalidValue);
    }
}

cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int len, int device) {
    EmulatedGpu* g = Emulator::get().gpu(device);
    if (g == nullptr) return set_last_error(cudaErrorInvalidDevice);
    if (len < static_cast<int>(g->bus_id.size()) + 1) return set_last_error(cudaErrorInvalidValue);
    std::snprintf(bus_id, static_cast<size_t>(len), "%s", g->bus_id.c_str());
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
    Emulator& emu = Emulator::get();
    if (emu.gpu(device) == nullptr || emu.gpu(peer) == nullptr)
        return set_last_error(cudaErrorInvalidDevice);
    *can = device != peer;  // every pair, as on an NVSwitch server
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
    TRAINRIG_EMU_ENTER(gpu);
    if (flags != 0) return set_last_error(cudaErrorInvalidValue);
    if (Emulator::get().gpu(peer) == nullptr || peer == gpu->index)
        return set_last_error(cudaErrorInvalidDevice);
    std::lock_guard lock(gpu->mu);
    if (gpu->peer_enabled[static_cast<size_t>(peer)])
        return set_last_error(cudaErrorPeerAccessAlreadyEnabled);
    gpu->peer_enabled[static_cast<size_t>(peer)] = true;
    return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) {
    TRAINRIG_EMU_ENTER(gpu);
    if (Emulator::get().gpu(peer) == nullptr) return set_last_error(cudaErrorInvalidDevice);
    std::lock_guard lock(gpu->mu);
    if (!gpu->peer_enabled[static_cast<size_t>(peer)])
        return set_last_error(cudaErrorPeerAccessNotEnabled);
    gpu->peer_enabled[static_cast<size_t>(peer)] = false;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
    TRAINRIG_EMU_ENTER(gpu);
    wait_for_device(*gpu);
    return set_last_error(gpu->sticky_error());
}

// Waits for the device's work, then frees its memory and clears its error and settings: what a
// test does after a planted fault, as a program would after a GPU fault.
cudaError_t cudaDeviceReset(void) {
    Emulator& emu = Emulator::get();
    EmulatedGpu* gpu = emu.current();
    if (gpu == nullptr) return set_last_error(cudaErrorNoDevice);
    wait_for_device(*gpu);
    for (const Allocation& a : emu.device_allocations())
        if (a.device == gpu->index) {
            emu.remove_allocation(reinterpret_cast<void*>(a.begin), nullptr);
            gpu->allocated -= a.size;
            std::free(reinterpret_cast<void*>(a.begin));
        }
    std::lock_guard lock(gpu->mu);
    gpu->sticky = cudaSuccess;
    gpu->max_dynamic_shared.clear();
    gpu->peer_enabled.assign(gpu->peer_enabled.size(), false);
    last_error() = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    const cudaError_t e = last_error();
    last_error() = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error(); }

const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
        case cudaSuccess:
            return "cudaSuccess";
        case cudaErrorInvalidValue:
            return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation:
            return "cudaErrorMemoryAllocation";
        case cudaErrorInvalidConfiguration:
            return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidDevice:
            return "cudaErrorInvalidDevice";
        case cudaErrorNoDevice:
            return "cudaErrorNoDevice";
        case cudaErrorInvalidResourceHandle:
            return "cudaErrorInvalidResourceHandle";
        case cudaErrorNotReady:
            return "cudaErrorNotReady";
        case cudaErrorPeerAccessAlreadyEnabled:
            return "cudaErrorPeerAccessAlreadyEnabled";
        case cudaErrorPeerAccessNotEnabled:
            return "cudaErrorPeerAccessNotEnabled";
        case cudaErrorLaunchFailure:
            return "cudaErrorLaunchFailure";
        case cudaErrorInvalidDevicePointer:
            return "cudaErrorInvalidDevicePointer";
        default:
            return "cudaErrorUnknown";
    }
}

// The runtime's own wording for the errors the emulator returns.
const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case cudaSuccess:
            return "no error";
        case cudaErrorInvalidValue:
            return "invalid argument";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidConfiguration:
            return "invalid configuration argument";
        case cudaErrorInvalidDevice:
            return "invalid device ordinal";
        case cudaErrorNoDevice:
            return "no CUDA-capable device is detected";
        case cudaErrorInvalidResourceHandle:
            return "invalid resource handle";
        case cudaErrorNotReady:
            return "device not ready";
        case cudaErrorPeerAccessAlreadyEnabled:
            return "peer access is already enabled";
        case cudaErrorPeerAccessNotEnabled:
            return "peer access has not been enabled";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure";
        case cudaErrorInvalidDevicePointer:
            return "invalid device pointer";
        default:
            return "unknown error";
    }
}

}  // extern "C"

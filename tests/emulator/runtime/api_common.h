// What every emulated CUDA runtime call does first: find the current device, and return the
// device's sticky error once a kernel has faulted on it, as every call after a fault does on a
// GPU.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/emulator.h"

namespace trainrig::emu {

// Sets *gpu to the current device; cudaSuccess, or the error the call returns.
inline cudaError_t enter(EmulatedGpu** gpu) {
    Emulator& emu = Emulator::get();
    *gpu = emu.current();
    if (*gpu == nullptr)
        return set_last_error(emu.gpus().empty() ? cudaErrorNoDevice : cudaErrorInvalidDevice);
    if (const cudaError_t sticky = (*gpu)->sticky_error(); sticky != cudaSuccess)
        return set_last_error(sticky);
    return cudaSuccess;
}

#define TRAINRIG_EMU_ENTER(gpu)                                                             \
    ::trainrig::emu::EmulatedGpu* gpu = nullptr;                                            \
    if (const cudaError_t entered_ = ::trainrig::emu::enter(&gpu); entered_ != cudaSuccess) \
    return entered_

}  // namespace trainrig::emu

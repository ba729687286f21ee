// Whether the CUDA training backend's kernels can run on a GPU, decided from what the CUDA
// runtime reports of it before anything is launched, and the sentence a failed kernel setup
// becomes. Plain C++ (the CUDA backend fills GpuLimits), so every decision is tested without a
// GPU (tests/unit/device_fit_test.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trainrig::train {

// What the CUDA runtime reports of a GPU (cudaDeviceProp).
struct GpuLimits {
    std::string name;  // "NVIDIA GeForce RTX 4090"
    int cc_major = 0, cc_minor = 0;
    // The most shared memory one block may use once its kernel opts in
    // (sharedMemPerBlockOptin), bytes: 166912 on compute capability 8.0, 232448 on 9.0 and
    // 101376 on 8.6 and 8.9 (CUDA C Programming Guide, "Compute Capabilities", technical
    // specifications table: 163, 227 and 99 KB).
    size_t smem_optin = 0;
};

// Ok when the attention kernels at head size `hs` fit the GPU's opt-in shared memory per block
// (train/attention_smem.h); otherwise a refusal that names the GPU, its limit, the kernel and
// what it needs, and the largest smaller head size that fits, when one does.
Status check_attention_fits(const GpuLimits& gpu, int hs);

// Why a kernel's one-time setup (raising its shared-memory limit) failed.
enum class SetupFailure {
    kNoKernelImage,  // the plugin holds no code this GPU runs (cudaErrorNoKernelImageForDevice)
    kRefused,        // the GPU refused the shared memory asked for
};
struct KernelSetupFailure {
    SetupFailure kind = SetupFailure::kRefused;
    std::string kernel;  // "attention_backward_dkv_kernel"
    size_t smem_bytes = 0;
    std::string cuda_error;  // the runtime's own string
};

// The error a failed kernel setup of a model with head size `hs` becomes (only attention raises
// its shared-memory limit). `built_for` is the plugin's CMAKE_CUDA_ARCHITECTURES
// ("80-real;90-real;100-real;100-virtual").
Status kernel_setup_status(const GpuLimits& gpu, const KernelSetupFailure& failure, int hs,
                           std::string_view built_for);

// "native code for compute capability 8.0, 9.0 and 10.0, PTX for 10.0" from a
// CMAKE_CUDA_ARCHITECTURES list ("80-real;90-real;100-real;100-virtual"; a bare "90" is both).
std::string describe_cuda_architectures(std::string_view cmake_list);

}  // namespace trainrig::train

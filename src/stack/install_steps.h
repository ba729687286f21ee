// Installing a recommended stack on Debian 12, Ubuntu 22.04 or 24.04: NVIDIA's CUDA network
// repository, the driver branch, the toolkit, the cuDNN and NCCL that match the wheel (for
// building extensions and nccl-tests), and the PyTorch wheel in a virtual environment.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/root_fs.h"
#include "stack/recommend.h"
#include "stack/stack_data.h"

namespace trainrig::stack {

// --distro: an id of the data's [[distro]] table, or "auto": the machine's /etc/os-release
// (under --root). Auto on a distribution the data lacks gives nullptr and `why` (no steps, no
// error); a named one the data lacks is an error listing the known ids.
Result<const Distro*> resolve_distro(const StackData& d, std::string_view option,
                                     const RootFs& root, std::string& why);

struct InstallStep {
    std::string command;  // one shell line
    std::string why;
};

// The steps, in order. Empty when the recommendation was not judged (a pin newer than the data).
std::vector<InstallStep> install_steps(const Recommendation& r, const Distro& distro);

// Where the steps' package names and commands come from.
inline constexpr const char* kInstallSources =
    "NVIDIA CUDA Installation Guide for Linux (network repository, cuda-keyring_1.1-1, "
    "cuda-toolkit-X-Y); NVIDIA Driver Installation Guide, 'Kernel Modules' and 'Version locking' "
    "(nvidia-open, cuda-drivers, nvidia-driver-pinning-BRANCH, from R580 on); NVIDIA cuDNN "
    "installation guide (libcudnn9-cuda-MAJOR); NVIDIA NCCL installation guide "
    "(libnccl2=VERSION-1+cudaX.Y); pytorch.org 'Get started' (--index-url "
    "https://download.pytorch.org/whl/cuXYZ)";

}  // namespace trainrig::stack

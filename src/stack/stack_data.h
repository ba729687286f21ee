// The stack data: CUDA releases and their drivers, GPU architectures and models, driver branches,
// NCCL versions and PyTorch releases with their CUDA wheels, each row with its source. Built in
// from src/stack/stack_data.toml; `trainrig stack --stack-data FILE` loads an updated copy.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::stack {

// Compute capability as major * 10 + minor: 90 for "9.0", 120 for "12.0".
using ComputeCapability = int;

struct CudaRelease {
    int cuda = 0;                // 12080 = 12.8 (cudaRuntimeGetVersion's encoding)
    std::string released;        // "2026-03-09", or "" where no source dates it
    std::string toolkit_driver;  // the Linux driver of its GA release: full support
    std::string minor_compat;    // the oldest driver that runs it (minor-version compatibility)
    std::string source;
};

struct Architecture {
    std::string name;  // "Hopper"
    std::vector<ComputeCapability> compute_capabilities;
    int first_cuda = 0;          // the first CUDA toolkit that supports it
    int last_cuda_major = 0;     // 0: still supported by every CUDA
    int last_driver_branch = 0;  // 0: still supported by every driver branch
    std::string source;
};

struct GpuModel {
    std::string id;                  // the plan catalog's id where it has the GPU: "h100-sxm"
    std::vector<std::string> names;  // what --gpu also accepts
    ComputeCapability compute_capability = 0;
    std::vector<unsigned> pci_device_ids;
    std::string source;
};

enum class BranchType { kUnknown, kLongTerm, kProduction, kNewFeature };

struct DriverBranch {
    int branch = 0;  // 580
    BranchType type = BranchType::kUnknown;
    std::string end_of_life;  // "2028-06" or ""
    bool ended = false;       // NVIDIA lists it as end of life without a date
    std::string source;
};

struct NcclRelease {
    std::string version;  // "2.28.9"
    std::vector<int> cuda_majors;
    std::string source;
};

struct TorchBuild {
    int cuda = 0;  // 12080
    bool experimental = false;
    std::string cudnn;                    // "" where no source names it
    std::string nccl;                     // "" where no source names it
    std::vector<ComputeCapability> arch;  // SASS targets
    ComputeCapability ptx = 0;            // also shipped as PTX; 0: none
    std::string source;
};

struct TorchRelease {
    std::string version;   // "2.8"
    std::string released;  // "2025-07" or "2026-03-18"; "" where no source dates it
    std::string python_min, python_max;
    std::vector<TorchBuild> builds;
    std::string source;
};

struct Distro {
    std::string id;    // "ubuntu2404"
    std::string name;  // "Ubuntu 24.04"
    std::string os_release_id, os_release_version;
    std::string python;  // its python3: "3.12"
    std::string keyring_url;
    std::string source;
};

struct StackData {
    std::string where;       // "built-in" or the file it was read from
    std::string current_to;  // "2026-09-08"
    std::vector<CudaRelease> cuda;
    std::vector<Architecture> architectures;
    std::vector<GpuModel> gpus;
    std::vector<DriverBranch> branches;
    std::vector<NcclRelease> nccl;
    std::vector<TorchRelease> torch;  // oldest first
    std::vector<Distro> distros;

    const CudaRelease* find_cuda(int cuda) const;
    const Architecture* find_architecture(ComputeCapability cc) const;
    const DriverBranch* find_branch(int branch) const;
    const TorchRelease* find_torch(std::string_view minor) const;  // "2.8"
    const NcclRelease* find_nccl(std::string_view version) const;
    const Distro* find_distro(std::string_view id) const;
    const GpuModel* find_gpu_by_pci(unsigned device_id) const;
    int newest_cuda() const;           // 13030
    int newest_branch() const;         // 610
    std::string newest_torch() const;  // "2.14"
};

// Parses and checks a data document (TOML); `where` names it in errors ("FILE line 12: ...").
Result<StackData> parse_stack_data(std::string_view text, std::string_view where);

// The data compiled into this binary (parsed once; a broken built-in is a build-time test
// failure, so it is never an error here).
const StackData& builtin_stack_data();

// The data the stack rules judge by: the built-in data, or what `trainrig stack --stack-data FILE`
// put in its place for this process.
const StackData& stack_data();
void use_stack_data(StackData data);

// "branch 580" from a driver version "580.65.06"; 0 when it is not a version.
int driver_branch(std::string_view driver_version);
// 90 from "9.0" (or "9", "sm_90"); 0 when it is not a compute capability.
ComputeCapability parse_compute_capability(std::string_view text);
// "9.0" from 90.
std::string cc_text(ComputeCapability cc);
// "sm_90" from 90.
std::string sm_text(ComputeCapability cc);
// Compares dotted versions numerically ("2.10" > "2.9"); missing parts count as 0.
int compare_versions(std::string_view a, std::string_view b);
// "2.8" from "2.8.1+cu128", "2.8" or "2.8.0"; "" when it is not such a version.
std::string minor_version(std::string_view version);

}  // namespace trainrig::stack

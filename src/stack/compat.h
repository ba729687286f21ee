// The compatibility rules of the stack data as pure functions: a CUDA version on a driver, a CUDA
// version on a GPU, a PyTorch wheel on a GPU, a driver branch's support. `stack`, `stack check`
// and doctor's stack rules all decide through these, so one condition has one verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stack/stack_data.h"

namespace trainrig::stack {

// What a CUDA version needs of the driver: its own row, or for a minor release newer than the
// data, its major's minor-compatibility floor with no toolkit driver. nullopt for a CUDA between
// two releases (there was no 12.7) or of a major the data does not know.
struct DriverRequirement {
    int cuda = 0;
    std::string toolkit_driver;  // "" for a minor release newer than the data
    std::string minor_compat;
    const CudaRelease* release = nullptr;  // its row, when the data has one
};
std::optional<DriverRequirement> driver_requirement(const StackData& d, int cuda);

// A CUDA version (runtime, toolkit, a wheel's) on the installed driver, whose CUDA version
// (nvidia-smi's "CUDA Version", NVML's cuDriverGetVersion) is driver_cuda.
enum class DriverFit {
    kUnknown,      // no driver CUDA version to compare with
    kRuns,         // the driver's CUDA is at least as new
    kMinorCompat,  // same major, newer minor, driver at or above the minor-compatibility floor
    kBelowFloor,   // same major, newer minor, driver below that floor (or floor unknown)
    kNewerMajor,   // a newer CUDA major than the driver's: never runs
};
DriverFit cuda_driver_fit(const StackData& d, int cuda, int driver_cuda, std::string_view driver);

// A CUDA version against a GPU architecture: can its compiler target it and its libraries run
// on it.
enum class CudaGpuFit {
    kSupported,
    kTooOld,   // the architecture came later (Blackwell needs CUDA 12.8)
    kDropped,  // the architecture's last CUDA major is older (Volta: CUDA 12.x)
    kUnknown,  // the compute capability is not in the data
};
CudaGpuFit cuda_gpu_fit(const StackData& d, int cuda, ComputeCapability cc);
// One sentence for a fit that is not kSupported: "compute capability 10.0 (Blackwell) needs CUDA
// 12.8 or newer".
std::string cuda_gpu_reason(const StackData& d, ComputeCapability cc);

// A wheel's kernels on a GPU: native code (SASS for the same major, an equal or older minor),
// PTX it can JIT-compile, or nothing ("no kernel image is available for execution on the
// device").
enum class ArchFit { kSass, kPtx, kNone };
ArchFit build_arch_fit(const TorchBuild& b, ComputeCapability cc);
// "sm_50, sm_60, ..., sm_90 + PTX compute_120"
std::string build_arch_text(const TorchBuild& b);
// "cu128" from 12080.
std::string cuda_tag(int cuda);

// An installed PyTorch (its version and torch.version.cuda) found in the data.
struct WheelLookup {
    const TorchRelease* release = nullptr;  // set when the release is in the data
    const TorchBuild* build = nullptr;      // set when that release shipped this CUDA build
    bool newer_than_data = false;           // a release after the data's newest
    std::string why_unknown;                // when build is null: why it is not judged
};
WheelLookup find_wheel(const StackData& d, std::string_view torch_version, int torch_cuda);

// The CUDA a driver branch runs natively: the newest CUDA whose toolkit driver is of that branch
// or older. 0 when no CUDA in the data is that old.
int branch_cuda(const StackData& d, int branch);
// The first driver of a branch that shipped with a CUDA toolkit ("580.65.06"), or "".
std::string branch_first_driver(const StackData& d, int branch);
// Whether a branch has ended by the data's date: ended, or its end of life month is past.
bool branch_ended(const StackData& d, const DriverBranch& b);
std::string_view branch_type_name(BranchType t);

// "newer than the data (current to 2026-09-08); not judged"
std::string newer_than_data(const StackData& d);

}  // namespace trainrig::stack

// The recommended stack for a GPU: the newest PyTorch release whose wheels carry kernels for it,
// that release's newest stable CUDA build the GPU supports, a data-centre driver branch that runs
// that CUDA natively (long-term support before production), the cuDNN and NCCL the wheel
// bundles, and a Python the release has wheels for. --cuda and --torch pin a part; the rest
// follows, or one error names the pin and the rule it breaks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stack/gpu_target.h"
#include "stack/stack_data.h"

namespace trainrig::stack {

struct Pins {
    std::optional<std::string> cuda;   // --cuda as typed: "12.4", "12.4.1" or "cu124"
    std::optional<std::string> torch;  // --torch as typed: "2.8" or "2.8.1"
};

// One row of the recommendation table.
struct Component {
    std::string name;     // driver, CUDA, cuDNN, NCCL, PyTorch, Python
    std::string version;  // what to install ("" where the data does not say)
    std::string why;      // one clause
    std::string source;   // the data row it comes from
};

enum class OpenModules { kRequired, kRecommended, kUnsupported };

struct Recommendation {
    GpuTarget gpu;
    Pins pins;
    bool judged = true;  // false: a pin is newer than the data, so nothing follows from it
    const TorchRelease* torch = nullptr;
    const TorchBuild* build = nullptr;
    std::string torch_version;             // "2.14" (also set for a pin newer than the data)
    int cuda = 0;                          // 13020
    int driver_branch = 0;                 // 595
    const DriverBranch* branch = nullptr;  // its row, when the data has one
    std::string driver_min;                // "595.45.04"
    OpenModules open_modules = OpenModules::kRecommended;
    std::string python;  // "3.12"
    const Distro* distro = nullptr;
    std::vector<Component> components;
    std::vector<std::string> warnings;  // "--torch 2.16 is newer than the data ..."
};

// `distro` (may be null) decides the Python: its python3 when the release supports it.
Result<Recommendation> recommend(const StackData& d, const GpuTarget& gpu, const Pins& pins,
                                 const Distro* distro);

// The pip command line for the recommended wheel:
// pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu132
std::string pip_install_line(const Recommendation& r);

}  // namespace trainrig::stack

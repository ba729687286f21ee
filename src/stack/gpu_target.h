// Which GPU a stack is for: one named on the command line (a plan catalog id or a common name),
// or the GPUs a machine (or snapshot) has, with the compute capability each one reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"
#include "stack/stack_data.h"

namespace trainrig::stack {

struct GpuTarget {
    std::string id;    // the data's GPU id ("h100-sxm"), "" for a model it does not list
    std::string name;  // "H100 SXM5 80GB" or "8 x NVIDIA H100 80GB HBM3"
    std::vector<ComputeCapability> ccs;  // distinct, ascending
    std::string how;                     // "named with --gpu" or where it was detected
};

// --gpu NAME: an id or name of the data's GPUs or the plan catalog's, compared without case,
// spaces, dashes and underscores ("H100-SXM", "h100 sxm", "H100 SXM5 80GB"). An unknown name is
// an error that lists the known ids.
Result<GpuTarget> named_gpu(const StackData& d, std::string_view name);

// --gpu auto: the GPUs of the machine: their compute capability from the driver (NVML), or else
// the model on the PCI bus by its device id. No GPU, or a model the data lacks, is an error that
// says to name one; `command` ("stack", "stack check") is the one its example runs again.
Result<GpuTarget> detected_gpus(const StackData& d, const Snapshot& s, std::string_view command);

// The distinct compute capabilities the driver reports for a snapshot's GPUs, each with the
// first GPU that has it ("GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3)"): what doctor's stack
// rules judge wheels and toolkits against. Empty without NVML facts.
struct GpuCapability {
    ComputeCapability cc = 0;
    std::string label;
};
std::vector<GpuCapability> reported_capabilities(const Snapshot& s);

}  // namespace trainrig::stack

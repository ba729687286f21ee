// PyTorch as pip or Debian installed it, read from its package metadata rather than by importing
// it (half a second to seconds): the version from its dist-info METADATA (or egg-info PKG-INFO),
// its CUDA build from torch/version.py, and its NCCL from the nvidia-nccl-cuXX wheel that
// PyTorch's CUDA wheels load theirs from. Whether CUDA initialises needs the import.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/fact.h"
#include "snapshot/gpu_facts.h"

namespace trainrig {

// An installed distribution: its dist-info or egg-info folder and its version.
struct Distribution {
    std::filesystem::path info;
    std::string version;
};
// The distribution whose normalised name is `name` (`exact`) or starts with it
// ("nvidia_nccl_cu") in site directory `dir`; nullopt when none is; an error when its metadata
// cannot be read.
std::optional<Result<Distribution>> find_distribution(const std::string& dir, std::string_view name,
                                                      bool exact);

// torch in the first of `dirs` (sys.path's order) that has it, as `import torch` would find it;
// absent when none has. cuda_available and device_count are failed (not imported).
Fact<TorchFacts> torch_from_metadata(const std::string& python,
                                     const std::vector<std::string>& dirs);

}  // namespace trainrig

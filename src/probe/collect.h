// Runs every probe and assembles the Snapshot of one machine.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "snapshot/snapshot.h"

namespace trainrig {

struct CollectOptions {
    std::filesystem::path root = "/";
    std::optional<std::string> data_dir;  // --data-dir: the folder training data is read from
    std::optional<std::string> env_file;  // --env-file: KEY=VALUE lines judged instead of environ
    std::chrono::milliseconds deadline{5000};  // --timeout: NVML, libraries, nvcc (torch: 4x)
    bool stack = true;  // read the CUDA runtime, NCCL, nvcc and PyTorch (topo needs none)
    bool torch = true;  // read PyTorch's version, CUDA and NCCL from its installed metadata
                        // (doctor skips it when no rule needs it)
    bool torch_import = false;  // import torch: can it use CUDA, how many GPUs (seconds)
};

// Fails only for bad user input (an unreadable or malformed --env-file, a root that is not a
// folder); whatever the machine does not let us read is recorded in the Snapshot instead.
Result<Snapshot> collect_snapshot(const CollectOptions& options);

}  // namespace trainrig

// Which GPU a rank drives and which CPUs and memory it is bound to: the GPU's NUMA node, from
// the topology `doctor` reads. A rank finds its place from the launcher's environment
// (core/local_rank.h: torchrun's LOCAL_RANK, the MPIs' local ranks, Slurm's SLURM_LOCALID).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/local_rank.h"
#include "core/status.h"
#include "snapshot/snapshot.h"

namespace trainrig::launch {

struct GpuPlace {
    int index = 0;        // CUDA index in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
    std::string address;  // 0000:18:00.0
    int node = -1;        // NUMA node; -1 unknown
    std::string cpus;     // the node's CPUs, "0-55"
};

// NVIDIA display/3D functions in bus order, with their NUMA node and CPUs.
std::vector<GpuPlace> gpu_places(const Snapshot& s);

using RankEnv = LocalRank;
// local_rank_from_env over a child's environment.
Result<RankEnv> rank_from_env(const std::map<std::string, std::string>& env);

enum class NumaMode { kAuto, kNone };

struct Binding {
    std::vector<int> gpus;   // the GPUs the job uses (CUDA_VISIBLE_DEVICES)
    std::optional<int> gpu;  // this process's GPU, when it is one rank of one GPU
    int node = -1;           // bound NUMA node; -1 = not bound
    std::string cpus;        // bound CPUs
    std::string why;         // one line: the choice, or why nothing is bound
};

// `selected`: GPU indices from --gpus (empty: all). A rank beyond the GPUs is an error.
Result<Binding> choose_binding(const std::vector<GpuPlace>& places, std::vector<int> selected,
                               NumaMode mode, const RankEnv& rank);

// Binds this process (inherited across exec): sched_setaffinity and set_mempolicy(MPOL_BIND).
Status apply_binding(const Binding& b);

}  // namespace trainrig::launch

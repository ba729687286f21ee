// Which rank of its node this process is, from the launcher's environment, and which GPU that
// rank drives. `launch`, the NCCL benchmark and the trainer all place ranks by this one rule.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/status.h"

namespace trainrig {

struct LocalRank {
    std::optional<int> local_rank;  // none: no launcher said
    std::string from;               // the variable it came from
};

// An environment to read: a variable's value, or null when it is not set (std::getenv's shape).
using EnvLookup = std::function<const char*(const char*)>;

// The first of LOCAL_RANK (torchrun), OMPI_COMM_WORLD_LOCAL_RANK (Open MPI),
// MV2_COMM_WORLD_LOCAL_RANK (MVAPICH2), MPI_LOCALRANKID (MPICH's Hydra, Intel MPI) and
// SLURM_LOCALID (srun) that is set and not empty. A value that is not a rank is an error.
Result<LocalRank> local_rank_from_env(const EnvLookup& env);
// The same over this process's environment.
Result<LocalRank> local_rank_from_process_env();

// Which rank of the whole job this process is: the first of RANK (torchrun),
// OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (PMIx: srun --mpi=pmix), PMI_RANK (MPICH's Hydra,
// Intel MPI) and SLURM_PROCID (srun) that is set and not empty, in that order for the reasons
// local ranks are; none means a job of one, rank 0. A value that is not a rank is an error.
struct WorldRank {
    std::optional<int> rank;  // none: no launcher said
    std::string from;
};
Result<WorldRank> world_rank_from_env(const EnvLookup& env);
Result<WorldRank> world_rank_from_process_env();

// The CUDA device (0 .. visible-1) a local rank drives: local_rank modulo the visible devices.
// One process per GPU sees all of the node's GPUs and takes the local_rank-th; a launcher that
// gives each rank its own GPUs (Slurm --gpus-per-task, CUDA_VISIBLE_DEVICES per rank) leaves
// each rank seeing its own, and the modulo picks among them.
int local_device(int local_rank, int visible);

}  // namespace trainrig

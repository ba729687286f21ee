#include "core/local_rank.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>

#include "core/text.h"

namespace trainrig {
namespace {

// Which wins, and why: a launcher's variable describes the process it started, Slurm's leaks
// into everything started inside an allocation. torchrun under srun runs one agent per node, so
// every worker inherits the agent's SLURM_LOCALID (0) beside its own LOCAL_RANK; mpirun inside
// an sbatch script passes the batch step's SLURM_LOCALID=0 to all its ranks. So the launchers
// that start the ranks themselves come first, torchrun's before the MPIs' (torchrun is the
// innermost launcher when both appear), and SLURM_LOCALID last: it is right only when srun
// started this process itself.
constexpr std::array<const char*, 5> kLocalRankVariables = {
    "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
    "SLURM_LOCALID"};

// A node runs a few dozen ranks at most; anything near this is a garbled variable.
constexpr int64_t kMaxLocalRank = 100000;

}  // namespace

Result<LocalRank> local_rank_from_env(const EnvLookup& env) {
    for (const char* name : kLocalRankVariables) {
        const char* value = env(name);
        if (value == nullptr || *value == '\0') continue;
        const auto v = parse_i64(value);
        if (!v || *v < 0 || *v > kMaxLocalRank)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}={} is not a local rank", name, value),
                          fmt::format("unset {} or give it the rank's index on its node", name)};
        return LocalRank{static_cast<int>(*v), name};
    }
    return LocalRank{};
}

Result<LocalRank> local_rank_from_process_env() {
    return local_rank_from_env([](const char* name) { return std::getenv(name); });
}

int local_device(int local_rank, int visible) {
    return visible > 0 && local_rank > 0 ? local_rank % visible : 0;
}

}  // namespace trainrig

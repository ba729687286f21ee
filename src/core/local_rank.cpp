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

constexpr std::array<const char*, 5> kWorldRankVariables = {
    "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

// A node runs a few dozen ranks at most; anything near this is a garbled variable.
constexpr int64_t kMaxLocalRank = 100000;
// The largest jobs run some 100,000 ranks.
constexpr int64_t kMaxWorldRank = 100000000;

struct Found {
    std::optional<int> rank;
    std::string from;
};

// The first variable of `names` that is set and not empty; `what` and `index` say what a rank
// is in the error sentence.
template <size_t N>
Result<Found> first_rank(const EnvLookup& env, const std::array<const char*, N>& names, int64_t max,
                         const char* what, const char* index) {
    for (const char* name : names) {
        const char* value = env(name);
        if (value == nullptr || *value == '\0') continue;
        const auto v = parse_i64(value);
        if (!v || *v < 0 || *v > max)
            return Status{Errc::kInvalidInput, fmt::format("{}={} is not a {}", name, value, what),
                          fmt::format("unset {} or give it the rank's index {}", name, index)};
        return Found{static_cast<int>(*v), name};
    }
    return Found{};
}

}  // namespace

Result<LocalRank> local_rank_from_env(const EnvLookup& env) {
    auto f = first_rank(env, kLocalRankVariables, kMaxLocalRank, "local rank", "on its node");
    if (!f) return f.status();
    return LocalRank{f->rank, f->from};
}

Result<WorldRank> world_rank_from_env(const EnvLookup& env) {
    auto f = first_rank(env, kWorldRankVariables, kMaxWorldRank, "rank", "in the job");
    if (!f) return f.status();
    return WorldRank{f->rank, f->from};
}

Result<WorldRank> world_rank_from_process_env() {
    return world_rank_from_env([](const char* name) { return std::getenv(name); });
}

Result<LocalRank> local_rank_from_process_env() {
    return local_rank_from_env([](const char* name) { return std::getenv(name); });
}

int local_device(int local_rank, int visible) {
    return visible > 0 && local_rank > 0 ? local_rank % visible : 0;
}

}  // namespace trainrig

// Ranks that must stop together: after each phase of a multi-rank measurement every rank says
// whether its part succeeded, a rank that failed included, and all of them learn whether every
// rank did. They then go on together or abandon together, so no rank is left waiting in a
// collective the others skipped (nccl-pairs: MPI between the ranks of a pair of nodes).
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace trainrig::bench {

// The group's all-reduce (minimum) of one int per rank; std::nullopt when it failed. Every rank
// of the group calls it, the same number of times.
using MinOverRanks = std::function<std::optional<int>(int)>;

// Every rank calls this after `phase` with its own outcome, in the same order on every rank.
// Ok only when every rank succeeded. Otherwise the same on all: a rank that failed gets its own
// failure back, the others "rank R of N failed during <phase>", R the lowest rank that failed.
Status agree(const Status& mine, int rank, int size, std::string_view phase,
             const MinOverRanks& min_over_ranks);

}  // namespace trainrig::bench

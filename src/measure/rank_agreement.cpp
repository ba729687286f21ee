#include "measure/rank_agreement.h"

#include <fmt/format.h>

namespace trainrig::bench {

Status agree(const Status& mine, int rank, int size, std::string_view phase,
             const MinOverRanks& min_over_ranks) {
    // Each rank offers its own number when it failed and `size` when not: the minimum is the
    // lowest rank that failed, or `size` when none did.
    const std::optional<int> first_failed = min_over_ranks(mine.ok() ? size : rank);
    if (!mine.ok()) return mine;
    if (!first_failed)
        return Status{Errc::kIo, fmt::format("the ranks could not agree after {}", phase)};
    if (*first_failed >= size) return ok_status();
    return Status{Errc::kIo,
                  fmt::format("rank {} of {} failed during {}", *first_failed, size, phase)};
}

}  // namespace trainrig::bench

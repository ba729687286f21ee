// nccl-tests' bandwidth conventions (doc/PERFORMANCE.md and the *GetBw functions of src/*.cu).
#include "measure/collective_math.h"

#include <algorithm>

namespace trainrig::bench {

std::string_view collective_name(Collective c) {
    switch (c) {
        case Collective::kAllReduce:
            return "all_reduce";
        case Collective::kAllGather:
            return "all_gather";
        case Collective::kReduceScatter:
            return "reduce_scatter";
        case Collective::kBroadcast:
            return "broadcast";
        case Collective::kAllToAll:
            return "alltoall";
    }
    return "unknown";
}

std::optional<Collective> collective_from_name(std::string_view name) {
    for (const Collective c : all_collectives())
        if (collective_name(c) == name) return c;
    return std::nullopt;
}

std::vector<Collective> all_collectives() {
    return {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
            Collective::kBroadcast, Collective::kAllToAll};
}

double bus_factor(Collective c, int nranks) {
    if (nranks <= 0) return 0;
    const double n = nranks;
    switch (c) {
        case Collective::kAllReduce:
            return 2 * (n - 1) / n;
        case Collective::kAllGather:
        case Collective::kReduceScatter:
        case Collective::kAllToAll:
            return (n - 1) / n;
        case Collective::kBroadcast:
            return 1;
    }
    return 0;
}

double algbw(double size_bytes, double seconds) { return seconds > 0 ? size_bytes / seconds : 0; }

double busbw(Collective c, int nranks, double size_bytes, double seconds) {
    return algbw(size_bytes, seconds) * bus_factor(c, nranks);
}

CollectiveCounts collective_counts(Collective c, size_t size_bytes, size_t elem_bytes, int nranks) {
    const size_t n = static_cast<size_t>(std::max(nranks, 1));
    const size_t count = std::max<size_t>(size_bytes / std::max<size_t>(elem_bytes, 1), 1);
    const size_t share = std::max<size_t>(count / n, 1);
    switch (c) {
        case Collective::kAllReduce:
        case Collective::kBroadcast:
            return {count, count, count};
        case Collective::kAllGather:
            return {share, share * n, share};
        case Collective::kReduceScatter:
            return {share * n, share, share};
        case Collective::kAllToAll:
            return {share * n, share * n, share};
    }
    return {};
}

size_t collective_size_bytes(const CollectiveCounts& counts, size_t elem_bytes) {
    return elem_bytes * std::max(counts.send_count, counts.recv_count);
}

std::vector<size_t> collective_sizes(SweepSize size) {
    constexpr size_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    if (size == SweepSize::kEmulated) return {64 * kKiB, 1 * kMiB, 4 * kMiB};
    if (size == SweepSize::kQuick) return {1 * kMiB, 64 * kMiB, 512 * kMiB};
    // From latency-bound to bandwidth-bound: 8 H200s reach their peak busbw only past 1 GiB.
    return {64 * kKiB, 1 * kMiB, 16 * kMiB, 256 * kMiB, 1 * kGiB, 4 * kGiB};
}

}  // namespace trainrig::bench

// The bandwidth arithmetic of nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md) and
// the known per-rank inputs and expected outputs the NCCL benchmark checks its results against.
// Pure C++: unit-tested without a GPU; the value functions also compile into the CUDA kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/host_device.h"
#include "measure/sweep_size.h"

namespace trainrig::bench {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll };

// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall" (nccl-tests' names).
std::string_view collective_name(Collective c);
std::optional<Collective> collective_from_name(std::string_view name);
// Every collective the benchmark runs, in the order it runs them.
std::vector<Collective> all_collectives();

// busbw / algbw for n ranks (PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather, reduce_scatter
// and alltoall (n-1)/n; broadcast 1. It makes busbw comparable with the link speed whatever n.
double bus_factor(Collective c, int nranks);
// algbw = S / t (bytes/s) and busbw = algbw · bus_factor.
double algbw(double size_bytes, double seconds);
double busbw(Collective c, int nranks, double size_bytes, double seconds);

// Elements per rank for one test, nccl-tests' convention: S (the "size" column) is the larger of
// one rank's send and receive buffers. all_gather sends S/n and receives S; reduce_scatter
// sends S and receives S/n; alltoall sends S as n chunks of S/n; all_reduce and broadcast send
// and receive S. `block` is the per-rank (all_gather, reduce_scatter) or per-peer (alltoall)
// share, and `count` of the other collectives.
struct CollectiveCounts {
    size_t send_count = 0;
    size_t recv_count = 0;
    size_t block = 0;
};
// For a requested S in bytes: rounded down so every share is whole elements (at least one).
CollectiveCounts collective_counts(Collective c, size_t size_bytes, size_t elem_bytes, int nranks);
// The S those counts stand for: elem_bytes · max(send_count, recv_count).
size_t collective_size_bytes(const CollectiveCounts& counts, size_t elem_bytes);

// The sizes swept: 64 KiB .. 4 GiB, or three sizes when quick (1 MiB .. 512 MiB) or on an
// emulated device (64 KiB .. 4 MiB).
std::vector<size_t> collective_sizes(SweepSize size);

// Input element i of rank r's send buffer. Small integers, so every sum over ranks is exact in
// float32 whatever order NCCL adds in, up to 4600 ranks (31 + 32·112 = 3615 per term, < 2^24).
TRAINRIG_HOST_DEVICE inline float collective_input(int rank, size_t i) {
    return static_cast<float>((rank % 31) + 1 + 32 * static_cast<int>(i % 113));
}

// Σ over ranks 0..n-1 of the rank term (rank % 31) + 1 of collective_input.
TRAINRIG_HOST_DEVICE inline int64_t collective_rank_term_sum(int nranks) {
    const int64_t full = nranks / 31, rest = nranks % 31;
    return full * (31 * 32 / 2) + rest * (rest + 1) / 2;
}

// What element j of rank r's receive buffer must hold after the collective (sum reduction,
// broadcast root 0, `block` as in CollectiveCounts).
TRAINRIG_HOST_DEVICE inline float collective_expected(Collective c, int nranks, int rank,
                                                      size_t block, size_t j) {
    const int64_t n = nranks;
    switch (c) {
        case Collective::kAllReduce:
            return static_cast<float>(collective_rank_term_sum(nranks) +
                                      n * 32 * static_cast<int64_t>(j % 113));
        case Collective::kReduceScatter:
            return static_cast<float>(
                collective_rank_term_sum(nranks) +
                n * 32 * static_cast<int64_t>((static_cast<size_t>(rank) * block + j) % 113));
        case Collective::kAllGather:
            return collective_input(static_cast<int>(j / block), j % block);
        case Collective::kBroadcast:
            return collective_input(0, j);
        case Collective::kAllToAll:
            // Chunk q of rank r's receive buffer is chunk r of rank q's send buffer.
            return collective_input(static_cast<int>(j / block),
                                    static_cast<size_t>(rank) * block + j % block);
    }
    return -1.0f;
}

}  // namespace trainrig::bench

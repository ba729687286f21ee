// `cpu-mem`: STREAM copy and triad bandwidth with one pinned thread per core, over all cores and,
// on a machine with several NUMA nodes, per node with the node's cores and memory alone (the
// number a NUMA-bound data-loader worker sees). docs/METHODOLOGY.md gives sizes and counts.
#pragma once

#include <memory>

#include "bench/benchmark.h"

namespace trainrig::bench {

std::unique_ptr<Benchmark> make_cpu_mem_bench();

// Elements per array: four times the last-level cache in all (STREAM's rule), and at least
// `floor_elements`.
size_t stream_elements(size_t llc_bytes, size_t floor_elements);

}  // namespace trainrig::bench

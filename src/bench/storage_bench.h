// `storage`: sequential read bandwidth (1 MiB reads, queue depth 8) and 4 KiB random-read IOPS
// (queue depth 32) of the disk under --data-dir, with O_DIRECT so the page cache is not what is
// measured, on a test file the benchmark writes, checks on every read, and leaves no trace of.
#pragma once

#include <memory>

#include "bench/benchmark.h"

namespace trainrig::bench {

std::unique_ptr<Benchmark> make_storage_bench();

}  // namespace trainrig::bench

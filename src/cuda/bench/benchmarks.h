// The GPU benchmarks' run functions. The list is measure/gpu_benchmarks.h; to add one: a row
// there, its run function in its own file declared here, and a row in kBenchmarks
// (plugin_entry.cpp).
#pragma once

#include "core/status.h"
#include "cuda/bench/bench_context.h"

namespace trainrig::cuda {

// Each appends its records as it finishes them, so an error or an interruption keeps what was
// measured; a failed Status becomes the reply's "error" sentence.
struct GpuBenchmark {
    const char* id;  // as in measure/gpu_benchmarks.h, which says what it measures
    Status (*run)(const BenchContext& ctx, Records& out);
};

// h2d and d2h (copy_bench.cpp): PCIe copies from and to pinned and pageable host memory.
Status run_copy_bench(const BenchContext& ctx, Records& out);
// hbm (hbm_bench.cpp): device memory bandwidth from device-to-device copies.
Status run_hbm_bench(const BenchContext& ctx, Records& out);
// gemm (gemm_bench.cpp): cuBLASLt matmul throughput per dtype and shape.
Status run_gemm_bench(const BenchContext& ctx, Records& out);
// burn (burn_bench.cpp): sustained bf16 GEMM load on all GPUs with bit-exact output checks.
Status run_burn_bench(const BenchContext& ctx, Records& out);
// p2p (p2p_bench.cpp): GPU-to-GPU copy bandwidth matrix.
Status run_p2p_bench(const BenchContext& ctx, Records& out);
// nccl (nccl_bench.cpp): collective bandwidth, nccl-tests style.
Status run_nccl_bench(const BenchContext& ctx, Records& out);
// nccl-pairs (nccl_pairs_bench.cpp): all-reduce between every pair of nodes, then the bad node.
Status run_nccl_pairs_bench(const BenchContext& ctx, Records& out);

}  // namespace trainrig::cuda

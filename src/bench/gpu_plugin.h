// The host side of the GPU benchmarks: finds libtrainrig_gpu_bench.so (gpu_plugin_abi.h) next
// to the binary, loads it on first use, and turns its JSON answers into records. When it is
// absent or cannot load (no CUDA libraries), every GPU benchmark is skipped with that reason.
// Looked for in $TRAINRIG_GPU_BENCH_PLUGIN, else beside the executable, else in ../lib/trainrig/
// from it, else on the dynamic loader's search path.
#pragma once

#include <memory>
#include <string>

#include "bench/benchmark.h"
#include "measure/gpu_benchmarks.h"

namespace trainrig::bench {

// One GPU benchmark of measure/gpu_benchmarks.h, carried out by the plugin: skipped with fewer
// GPUs (or ranks, for nccl) than it needs, and, for one across nodes (nccl-pairs), outside a
// launcher with ranks on several nodes.
std::unique_ptr<Benchmark> make_gpu_bench(const GpuBenchmarkInfo& info);

// The plugin's device list (the "devices" array of trainrig_gpu_bench_list), empty when there is
// no plugin or no GPU; for the machine facts of a run that measured GPUs.
nlohmann::json gpu_devices();

}  // namespace trainrig::bench

// The host side of the GPU benchmarks: finds libtrainrig_gpu_bench.so (gpu_plugin_abi.h) next
// to the binary, loads it on first use, and turns its JSON answers into records. When it is
// absent or cannot load (no CUDA libraries), every GPU benchmark is skipped with that reason.
// Looked for in $TRAINRIG_GPU_BENCH_PLUGIN, else beside the executable, else in ../lib/trainrig/
// from it, else on the dynamic loader's search path.
#pragma once

#include <memory>
#include <string>

#include "bench/benchmark.h"

namespace trainrig::bench {

// One GPU benchmark carried out by the plugin: id as in the ABI ("h2d", "gemm", ...).
// min_gpus: how many GPUs (or ranks, for nccl) it needs.
// `across_nodes`: runs only under a launcher with ranks on several nodes (nccl-pairs).
std::unique_ptr<Benchmark> make_gpu_bench(const char* id, const char* description, int min_gpus,
                                          bool across_nodes = false);

// The plugin's device list (the "devices" array of trainrig_gpu_bench_list), empty when there is
// no plugin or no GPU; for the machine facts of a run that measured GPUs.
nlohmann::json gpu_devices();

}  // namespace trainrig::bench

// The GPU benchmarks, one list for both sides of the plugin boundary: `trainrig bench list` and
// `bench run` take them from here (src/bench/benchmarks.cpp), and the GPU benchmark plugin runs
// each by its id (src/cuda/bench/plugin_entry.cpp, which does not compile unless every id here
// has its run function there and no other). A new GPU benchmark: a row here, its run function in
// src/cuda/bench/<id>_bench.cpp, and a line in the plugin's table of run functions.
#pragma once

#include <array>

namespace trainrig::bench {

struct GpuBenchmarkInfo {
    const char* id;
    const char* description;  // as `trainrig bench list` shows it
    int min_gpus;             // fewer GPUs: skipped with the reason
    bool across_nodes;        // measures between nodes (under mpirun)
};

inline constexpr std::array<GpuBenchmarkInfo, 8> kGpuBenchmarks = {{
    {"h2d", "Host-to-device copy bandwidth, pinned and pageable", 1, false},
    {"d2h", "Device-to-host copy bandwidth, pinned and pageable", 1, false},
    {"hbm", "Device memory copy bandwidth (bytes read + written)", 1, false},
    {"gemm", "cuBLASLt GEMM TFLOP/s: bf16, fp16, tf32, fp8 over shapes", 1, false},
    {"p2p", "GPU-to-GPU copy bandwidth matrix, both directions", 2, false},
    {"nccl", "NCCL collectives: algbw and busbw over a size sweep", 2, false},
    {"nccl-pairs", "NCCL all-reduce between every pair of nodes (mpirun), and the bad node", 1,
     true},
    {"burn", "Sustained GEMM load with result checks and telemetry", 1, false},
}};

}  // namespace trainrig::bench

// Synthetic fleet nodes for the fleet tests: a healthy 8-GPU node whose measurements carry
// deterministic noise within +-1 % of their true figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleet/node_input.h"

namespace trainrig::fleet {

// Deterministic noise in [-1, 1] (splitmix64 of a counter).
inline double noise(uint64_t i) {
    uint64_t x = i + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return static_cast<double>(x >> 11) / static_cast<double>(1ull << 52) - 1.0;
}

inline NodeInput healthy_node(size_t i, uint64_t& seed) {
    NodeInput n;
    n.name = "node" + std::to_string(1000 + i).substr(1);
    n.source = n.name + "/report.json";
    n.kind = "report";
    n.verdict = "READY";
    n.versions = {{"driver", "550.90.07"}, {"nccl", "2.21.5"}, {"kernel", "6.1.0-27-amd64"}};
    n.shape = {{"gpus", "8 x NVIDIA H100 80GB HBM3"},
               {"gpu_links", "8 x Gen5 x16"},
               {"memory", "2015 GiB"}};
    n.settings = {{"vm.swappiness", "10"}, {"NCCL_IB_HCA", "mlx5"}};
    auto measure = [&](const std::string& label, const std::string& unit, const std::string& device,
                       double truth, bool higher) {
        Measurement m;
        m.key = label + "/{}";
        m.label = label;
        m.unit = unit;
        m.device = device;
        m.value = truth * (1 + 0.01 * noise(seed++));
        m.higher_is_better = higher;
        n.measurements.push_back(m);
    };
    for (int g = 0; g < 8; ++g) {
        measure("gemm bf16", "FLOP/s", "GPU " + std::to_string(g), 7.0e14, true);
        measure("hbm copy", "bytes/s", "GPU " + std::to_string(g), 2.9e12, true);
    }
    measure("nccl all-reduce-busbw", "bytes/s", "", 3.6e11, true);
    measure("train step-time", "s", "", 0.25, false);
    return n;
}

// Nodes node000 .. node<n-1>, all healthy.
inline std::vector<NodeInput> healthy_fleet(size_t n, uint64_t seed) {
    std::vector<NodeInput> nodes;
    for (size_t i = 0; i < n; ++i) nodes.push_back(healthy_node(i, seed));
    return nodes;
}

}  // namespace trainrig::fleet

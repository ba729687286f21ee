// GPUs and the links between them, as the planner needs them: peak dense throughput per
// precision, memory as the driver reports it, HBM bandwidth, board power, a price, and the
// all-reduce bus bandwidth a link sustains. Built in (hardware_catalog.cpp, every number with
// its source) and extensible or overridable by a TOML file (hardware_toml.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::plan {

enum class Precision { kFp32, kTf32, kBf16, kFp16, kFp8 };

struct GpuSpec {
    std::string id;    // "h100-sxm"
    std::string name;  // "H100 SXM5 80GB"
    std::string source;
    // Dense peak TFLOP/s (no sparsity); 0 = the GPU has no such tensor-core path.
    double tflops_fp32 = 0, tflops_tf32 = 0, tflops_bf16 = 0, tflops_fp16 = 0, tflops_fp8 = 0;
    double memory_bytes = 0;     // total as nvidia-smi / NVML report it
    double hbm_bytes_per_s = 0;  // datasheet memory bandwidth
    double tdp_watts = 0;
    std::string intra_link;       // default link between GPUs of one node
    std::string inter_link;       // default link between nodes (per NIC)
    int gpus_per_node = 8;        // the usual server
    int nics_per_node = 8;        // the usual rail-optimised node: one NIC per GPU
    double usd_per_gpu_hour = 0;  // indicative on-demand price; 0 = unknown
    std::string price_source;
};

enum class LinkKind { kIntraNode, kInterNode };

struct LinkSpec {
    std::string id;    // "nvlink4"
    std::string name;  // "NVLink 4 via NVSwitch"
    LinkKind kind = LinkKind::kIntraNode;
    double bytes_per_s = 0;  // per direction, per GPU (intra) or per NIC (inter)
    // nccl-tests all_reduce busbw / bytes_per_s, as measured (or assumed, then said so).
    double efficiency = 0;
    std::string source;
};

struct HardwareCatalog {
    std::vector<GpuSpec> gpus;
    std::vector<LinkSpec> links;

    const GpuSpec* gpu(std::string_view id) const { return find_id(gpus, id); }
    const LinkSpec* link(std::string_view id) const { return find_id(links, id); }
    GpuSpec* gpu(std::string_view id) { return find_id(gpus, id); }
    LinkSpec* link(std::string_view id) { return find_id(links, id); }
    std::string gpu_ids() const { return join_ids(gpus); }
    std::string link_ids() const { return join_ids(links); }

private:
    template <class V>
    static auto find_id(V& entries, std::string_view id) -> decltype(&entries.front()) {
        for (auto& e : entries)
            if (e.id == id) return &e;
        return nullptr;
    }
    template <class V>
    static std::string join_ids(const V& entries) {
        std::string out;
        for (const auto& e : entries) out += (out.empty() ? "" : ", ") + e.id;
        return out;
    }
};

HardwareCatalog builtin_hardware();

// Adds or overrides entries from a TOML file (format in docs/plan.md). A key that is not known
// or a value of the wrong type is an error naming the file, table and key; nothing is merged.
Status merge_hardware_toml(HardwareCatalog& catalog, std::string_view text, std::string_view where);

double peak_flops(const GpuSpec& gpu, Precision p);  // FLOP/s, 0 when unsupported
const char* precision_name(Precision p);

}  // namespace trainrig::plan

// Device enumeration through the CUDA runtime; PCIe link and NUMA node through sysfs.
#include "cuda/bench/gpu_inventory.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "cuda/cuda_check.h"
#include "nvml/nvml_reader.h"
#include "probe/parsers.h"

namespace trainrig::cuda {
namespace {

int read_int(const RootFs& fs, const std::string& path, int fallback) {
    auto text = fs.read_trimmed(path);
    if (!text.ok()) return fallback;
    int v = fallback;
    const std::string& s = *text;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() ? v : fallback;
}

int read_gen(const RootFs& fs, const std::string& path) {
    auto text = fs.read_trimmed(path);
    if (!text.ok()) return 0;
    auto gts = parse_link_speed(*text);
    return gts.ok() ? pcie_gen_from_gts(*gts) : 0;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

nlohmann::json or_null(int v, int unknown) {
    return v == unknown ? nlohmann::json(nullptr) : nlohmann::json(v);
}

}  // namespace

int pcie_gen_from_gts(double gts) {
    // PCIe per-lane rates by generation: 2.5, 5, 8, 16, 32, 64 GT/s.
    constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    for (int g = 0; g < 6; ++g)
        if (std::abs(gts - kRates[g]) < 0.01) return g + 1;
    return 0;
}

PcieLink read_pcie_link(const RootFs& fs, const std::string& bus_id) {
    const std::string dir = "/sys/bus/pci/devices/" + bus_id + "/";
    PcieLink l;
    l.gen = read_gen(fs, dir + "current_link_speed");
    l.max_gen = read_gen(fs, dir + "max_link_speed");
    l.width = std::max(read_int(fs, dir + "current_link_width", 0), 0);
    l.max_width = std::max(read_int(fs, dir + "max_link_width", 0), 0);
    return l;
}

int read_numa_node(const RootFs& fs, const std::string& bus_id) {
    return read_int(fs, "/sys/bus/pci/devices/" + bus_id + "/numa_node", -1);
}

Result<std::vector<GpuInfo>> list_gpus(const RootFs& fs) {
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        return Status{Errc::kUnsupported,
                      fmt::format("no GPU can be used: {}", no_device_reason(e)),
                      "run on a machine with an NVIDIA GPU and a driver new enough for CUDA 13"};
    }
    if (count == 0) return Status{Errc::kUnsupported, "no GPU can be used: no CUDA device found"};
    std::vector<GpuInfo> out;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p{};
        CUDA_TRY(cudaGetDeviceProperties(&p, d));
        GpuInfo g;
        g.index = d;
        g.name = p.name;
        g.cc_major = p.major;
        g.cc_minor = p.minor;
        g.memory_bytes = p.totalGlobalMem;
        g.sm_count = p.multiProcessorCount;
        char bus[32] = {};
        CUDA_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        g.pci_bus_id = lower(nvml::normalize_bus_id(bus));
        g.numa_node = read_numa_node(fs, g.pci_bus_id);
        const PcieLink l = read_pcie_link(fs, g.pci_bus_id);
        g.pcie_gen = l.gen;
        g.pcie_width = l.width;
        g.pcie_max_gen = l.max_gen;
        g.pcie_max_width = l.max_width;
        out.push_back(std::move(g));
    }
    return out;
}

Result<std::vector<GpuInfo>> select_gpus(const std::vector<GpuInfo>& all,
                                         const std::vector<int>& requested) {
    if (requested.empty()) return all;
    std::vector<GpuInfo> out;
    for (const int i : requested) {
        if (i < 0 || i >= static_cast<int>(all.size()))
            return Status{
                Errc::kInvalidInput,
                fmt::format("GPU {} does not exist (this machine has {})", i, all.size())};
        if (std::none_of(out.begin(), out.end(), [&](const GpuInfo& g) { return g.index == i; }))
            out.push_back(all[static_cast<size_t>(i)]);
    }
    return out;
}

nlohmann::json device_json(const GpuInfo& g) {
    return {{"index", g.index},
            {"name", g.name},
            {"pci_bus_id", g.pci_bus_id},
            {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
            {"memory_bytes", g.memory_bytes},
            {"multiprocessors", g.sm_count},
            {"numa_node", or_null(g.numa_node, -1)},
            {"pcie_gen", or_null(g.pcie_gen, 0)},
            {"pcie_width", or_null(g.pcie_width, 0)},
            {"pcie_max_gen", or_null(g.pcie_max_gen, 0)},
            {"pcie_max_width", or_null(g.pcie_max_width, 0)}};
}

nlohmann::json target_json(const GpuInfo& g) {
    return {{"gpu", g.index},
            {"gpu_name", g.name},
            {"pci_bus_id", g.pci_bus_id},
            {"pcie_gen", or_null(g.pcie_gen, 0)},
            {"pcie_width", or_null(g.pcie_width, 0)},
            {"pcie_max_gen", or_null(g.pcie_max_gen, 0)},
            {"pcie_max_width", or_null(g.pcie_max_width, 0)},
            {"numa_node", or_null(g.numa_node, -1)}};
}

nlohmann::json target_json(const std::vector<GpuInfo>& gs) {
    nlohmann::json idx = nlohmann::json::array(), bus = nlohmann::json::array();
    for (const auto& g : gs) {
        idx.push_back(g.index);
        bus.push_back(g.pci_bus_id);
    }
    return {{"gpus", idx},
            {"gpu_name", gs.empty() ? nlohmann::json(nullptr) : nlohmann::json(gs.front().name)},
            {"pci_bus_ids", bus}};
}

}  // namespace trainrig::cuda

#include "measure/expectations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/emulated_gpu.h"
#include "core/text.h"

namespace trainrig::bench {
namespace {

// x86 processor families by CPUID family and model (as /proc/cpuinfo prints them, decimal);
// family/model rather than the name, which clouds rename ("AMD EPYC 7V12" is a Rome part).
// Sources: libcpuid recog_amd.c / recog_intel.c, Linux arch/x86/include/asm/intel-family.h.
struct X86Family {
    const char* vendor;
    int family;
    int model_lo, model_hi;
    const char* name_contains;  // when family/model alone do not fix the channel count
    CpuMemoryPlatform platform;
};

// Channels and speeds at one DIMM per channel, from the vendors' platform specifications
// (docs/METHODOLOGY.md lists them). Left out on purpose: family 19h models A0h-AFh (Bergamo and
// Siena share them and differ in channels) and Granite Rapids-SP (shares 0xAD with the 6900P).
const X86Family kX86Families[] = {
    {"AuthenticAMD",
     0x17,
     0x30,
     0x3f,
     "",
     {"AMD EPYC 7002 (Rome)", 8, 3200, "AMD EPYC 7002: 8 channels DDR4-3200"}},
    {"AuthenticAMD",
     0x19,
     0x00,
     0x0f,
     "",
     {"AMD EPYC 7003 (Milan)", 8, 3200, "AMD EPYC 7003: 8 channels DDR4-3200"}},
    {"AuthenticAMD",
     0x19,
     0x10,
     0x1f,
     "",
     {"AMD EPYC 9004 (Genoa)", 12, 4800, "AMD EPYC 9004: 12 channels DDR5-4800"}},
    {"AuthenticAMD",
     0x1a,
     0x00,
     0x1f,
     "",
     {"AMD EPYC 9005 (Turin)", 12, 6000, "AMD EPYC 9005: 12 channels DDR5-6000"}},
    {"GenuineIntel",
     6,
     0x6a,
     0x6a,
     "",
     {"Intel Xeon 3rd gen (Ice Lake-SP)", 8, 3200, "Intel Xeon 83xx: 8 channels DDR4-3200"}},
    {"GenuineIntel",
     6,
     0x8f,
     0x8f,
     "",
     {"Intel Xeon 4th gen (Sapphire Rapids)", 8, 4800, "Intel Xeon 84xx: 8 channels DDR5-4800"}},
    {"GenuineIntel",
     6,
     0xcf,
     0xcf,
     "",
     {"Intel Xeon 5th gen (Emerald Rapids)", 8, 5600, "Intel Xeon 85xx: 8 channels DDR5-5600"}},
    {"GenuineIntel",
     6,
     0xad,
     0xad,
     "Xeon(R) 69",
     {"Intel Xeon 6900P (Granite Rapids-AP)", 12, 6400, "Intel Xeon 6900P: 12 channels DDR5-6400"}},
};

// STREAM triad built with streaming stores reaches 78-82 % of the channels' theoretical
// bandwidth (2x EPYC 9654 77.7-81.8 %, 2x EPYC 9755 80.3 %, Ice Lake 78.4 %: oracle-japan/
// ocitutorials run-stream*; NVIDIA's Grace guide says 80-95 %). cpu-mem's loops use ordinary
// stores, as STREAM compiled by GCC does, so every written line is first read (write-allocate):
// triad moves 32 bytes for the 24 it counts and copy 24 for 16, which caps them at 3/4 and 2/3
// of that (www.cs.virginia.edu/stream/ref.html on counting).
constexpr double kStreamEfficiency = 0.80;
constexpr double kTriadCountedShare = 24.0 / 32;
constexpr double kCopyCountedShare = 16.0 / 24;

// A pinned host<->device copy reaches 0.80-0.90 of the raw link: PCIe 5 x16 55.4 GB/s of 63 on
// 8x H200 and 51-57 on H100 systems, PCIe 4 x16 25-26 of 31.5 (nvbandwidth README and issues
// #6, #15, #42; stas00/ml-engineering network/README.md).
constexpr double kPinnedCopyEfficiency = 0.85;

// Datacenter NVMe drives are specified at 83-89 % of their x4 link for sequential reads
// (PM9A3 6.5 GB/s, Micron 7450 6.8, 9400 7.0, PM1743 13 on Gen5; docs/METHODOLOGY.md).
constexpr double kNvmeSeqEfficiency = 0.85;

// HBM copy (read + written counted) against the datasheet: A100 1.61 of 2.04 TB/s, H100 2.90 of
// 3.35, H200 4.01 of 4.8 (BabelStream, Azure AI-benchmarking-guide); memcpy-based copies on
// H100 2.49-2.53 (p2pBandwidthLatencyTest diagonal).
constexpr double kHbmCopyEfficiency = 0.80;

// Best-shape dense GEMM against the datasheet peak: A100 SXM 271 of 312 TFLOP/s, H100 SXM 795 of
// 989, B200 1745 of 2250 (stas00/ml-engineering "maximum achievable matmul FLOPs").
constexpr double kGemmEfficiency = 0.78;

// `bench run train` on a GPU (train() below gives the sources).
constexpr double kTrainMfu = 0.50;
constexpr double kTrainScaling = 0.90;

// all_reduce reaches its bus bandwidth plateau on messages of hundreds of MB (nccl-tests'
// large-message rows); smaller sizes are reported without an expectation.
constexpr double kNcclLargeBytes = 256.0 * (1 << 20);

// Members of records and machine facts, read without throwing on a missing member or another
// type (a plugin record may carry null where a string is usual).
std::string text(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

double number(const nlohmann::json& j, const char* key, double fallback = 0) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

Reference none(std::string why) { return {std::nullopt, std::move(why)}; }
Reference some(double value, std::string source) {
    return {Expectation{value, std::move(source)}, {}};
}

Reference cpu_mem(const BenchRecord& r, const nlohmann::json& machine) {
    const auto it = machine.find("cpu");
    const nlohmann::json cpu =
        it != machine.end() && it->is_object() ? *it : nlohmann::json::object();
    if (flag(cpu, "virtual"))
        return none(
            "virtual machine: its memory channels are shared with other guests, so "
            "no ceiling is known");
    const CpuMemoryPlatform* p = cpu_memory_platform(cpu);
    if (!p)
        return none(fmt::format(
            "no memory-channel reference for this CPU ({})",
            text(cpu, "model_name").empty() ? "model unknown" : text(cpu, "model_name")));
    const double sockets = std::max(1.0, number(machine, "packages", 1));
    // Memory-only nodes (CXL, HBM) have no cores to run on and hold none of the DDR channels.
    const double nodes =
        std::max(1.0, number(machine, "numa_nodes_with_cores", number(machine, "numa_nodes", 1)));
    // A NUMA node holds its share of the channels (NPS/SNC modes split a socket evenly).
    const bool per_node = r.target.contains("numa_node");
    const double peak = p->bytes_per_s() * (per_node ? sockets / nodes : sockets);
    const double share = r.name == "copy" ? kCopyCountedShare : kTriadCountedShare;
    const double factor = kStreamEfficiency * share;
    return some(factor * peak,
                fmt::format("{:.0f} % of {} channels × {} MT/s × 8 B = {:.1f} GB/s {} ({}; {})",
                            100 * factor, p->channels, p->mega_transfers, peak / 1e9,
                            per_node ? "for this node's share of the channels" : "for all sockets",
                            p->name, p->source));
}

Reference storage(const BenchRecord& r) {
    const std::string kind = text(r.target, "kind");
    if (kind == "virtual") return none("virtual disk: the storage ceiling is unknown");
    if (kind != "nvme")  // kinds as probe_storage.cpp names them
        return none(
            fmt::format("the disk is {}: only NVMe drives are judged, against their "
                        "PCIe link",
                        kind == "hdd"   ? "a hard disk"
                        : kind == "ssd" ? "a SATA/SAS SSD"
                                        : "of unknown kind"));
    if (r.name != "seq-read")
        return none("only sequential reads are judged (against the drive's PCIe link)");
    // As for a GPU: the width the drive can train to, so a drive at x2 of x4 fails.
    const double gts = number(r.target, "pcie_gts");
    const int trained = static_cast<int>(number(r.target, "pcie_width"));
    const int lanes = std::max(trained, static_cast<int>(number(r.target, "pcie_max_width")));
    if (gts <= 0 || trained <= 0) return none("the drive's PCIe link was not read");
    const double link = pcie_bytes_per_s(gts, lanes);
    return some(kNvmeSeqEfficiency * link,
                fmt::format("{:.0f} % of the drive's PCIe link ({} GT/s x{} = {:.2f} GB/s{})",
                            100 * kNvmeSeqEfficiency, gts, lanes, link / 1e9,
                            trained < lanes ? fmt::format("; it trained at x{}", trained) : ""));
}

Reference host_copy(const BenchRecord& r) {
    if (r.name != "pinned") return none("only copies from pinned memory are judged");
    if (r.target.contains("gpus"))
        return none(
            "copies to several GPUs at once share the host's links: no one link to "
            "judge against");
    double gts = number(r.target, "pcie_gts");
    if (gts <= 0) {
        // Generation to transfer rate: 2.5, 5, 8, 16, 32, 64 GT/s.
        static const double kRate[] = {0, 2.5, 5, 8, 16, 32, 64};
        const int gen = static_cast<int>(number(r.target, "pcie_gen"));
        gts = gen >= 1 && gen <= 6 ? kRate[gen] : 0;
    }
    // The width the GPU can train to, not the one it did: a link at x8 of x16 fails doctor's
    // pci.gpu-link and gpu.pcie-link, and so it fails here. The speed is the one it trained to
    // under load: a lower speed is a warning there, not a failure.
    const int trained = static_cast<int>(number(r.target, "pcie_width"));
    const int lanes = std::max(trained, static_cast<int>(number(r.target, "pcie_max_width")));
    if (gts <= 0 || trained <= 0) return none("the GPU's PCIe link was not read");
    const double link = pcie_bytes_per_s(gts, lanes);
    return some(kPinnedCopyEfficiency * link,
                fmt::format("{:.0f} % of the GPU's PCIe link ({} GT/s x{} = {:.1f} GB/s{})",
                            100 * kPinnedCopyEfficiency, gts, lanes, link / 1e9,
                            trained < lanes ? fmt::format("; it trained at x{}", trained) : ""));
}

// all_reduce bus bandwidth on large messages over the GPU's usual link inside one server: the
// link's per-direction rate × the busbw fraction nccl-tests measure on it (plan catalog).
Reference nccl(const BenchRecord& r, const plan::GpuSpec& g, const plan::HardwareCatalog& catalog) {
    const double ranks = number(r.target, "ranks");
    if (r.name != "all_reduce") return none("only all_reduce is judged");
    if (number(r.params, "size_bytes") < kNcclLargeBytes)
        return none("messages under 256 MiB are below NCCL's bandwidth plateau");
    if (ranks < 2 || ranks > g.gpus_per_node)
        return none("only all_reduce among the GPUs of one server is judged");
    const plan::LinkSpec* link = catalog.link(g.intra_link);
    if (!link || link->efficiency <= 0)
        return none(fmt::format("no all_reduce efficiency for the link {}", g.intra_link));
    return some(link->bytes_per_s * link->efficiency,
                fmt::format("{}: {:.0f} GB/s per direction × all_reduce busbw efficiency "
                            "{:.2f} ({})",
                            link->name, link->bytes_per_s / 1e9, link->efficiency, link->source));
}

// The reference trainer on a catalogued GPU: about half the dense bf16 peak as model FLOPs, as
// llm.c reaches for GPT-2 (124M on 8x A100 ≈ 56 %, 1.5B on 8x H100 ≈ 47 %; FACTS.md §8), and
// data-parallel scaling of at least 90 % of N x one GPU (the article's acceptance criterion,
// §5.3).
Reference train(const BenchRecord& r, const plan::GpuSpec& g) {
    if (r.name == "mfu")
        return some(kTrainMfu, fmt::format("{:.0f} % MFU on {} (llm.c's GPT-2 figures on "
                                           "A100/H100)",
                                           100 * kTrainMfu, g.name));
    if (r.name == "scaling") {  // a bar to clear, not a typical figure to come near
        auto bar = some(kTrainScaling, fmt::format("{:.0f} % of N x one GPU's tokens/s (the "
                                                   "article's multi-GPU acceptance criterion)",
                                                   100 * kTrainScaling));
        bar.expected->floor = true;
        return bar;
    }
    return none("only MFU and data-parallel scaling are judged");
}

Reference gpu(const BenchRecord& r, const plan::HardwareCatalog& catalog) {
    const std::string name = text(r.target, "gpu_name");
    if (name.empty()) return none("no hardware reference for this measurement");
    const plan::GpuSpec* g = catalog_gpu(name, catalog);
    if (!g) return none(fmt::format("no catalog entry for {}", name));
    if (r.bench == "hbm" && g->hbm_bytes_per_s > 0)
        return some(kHbmCopyEfficiency * g->hbm_bytes_per_s,
                    fmt::format("{:.0f} % of {}'s {:.2f} TB/s ({})", 100 * kHbmCopyEfficiency,
                                g->name, g->hbm_bytes_per_s / 1e12, g->source));
    if (r.bench == "gemm" || r.bench == "burn") {
        // gemm: only the best-shape summary has an expectation; single shapes are information.
        const std::string dtype = r.bench == "burn" ? "bf16" : text(r.params, "dtype");
        if (r.bench == "gemm" && text(r.params, "summary") != "best")
            return none("single shapes are information; the best-shape summary is judged");
        plan::Precision p;
        if (dtype == "bf16")
            p = plan::Precision::kBf16;
        else if (dtype == "fp16")
            p = plan::Precision::kFp16;
        else if (dtype == "tf32")
            p = plan::Precision::kTf32;
        else if (dtype == "fp8")
            p = plan::Precision::kFp8;
        else
            return none(fmt::format("no {} peak in the catalog", dtype));
        const double peak = plan::peak_flops(*g, p);
        if (peak <= 0) return none(fmt::format("no {} peak for {}", dtype, g->name));
        return some(kGemmEfficiency * peak,
                    fmt::format("{:.0f} % of {}'s dense {} peak {:.0f} TFLOP/s ({})",
                                100 * kGemmEfficiency, g->name, dtype, peak / 1e12, g->source));
    }
    if (r.bench == "nccl") return nccl(r, *g, catalog);
    if (r.bench == "train") return train(r, *g);
    return none(fmt::format("no {} figure for {}", r.bench, g->name));
}

}  // namespace

const CpuMemoryPlatform* cpu_memory_platform(const nlohmann::json& cpu) {
    const std::string vendor = text(cpu, "vendor");
    const int family = static_cast<int>(number(cpu, "family", -1));
    const int model = static_cast<int>(number(cpu, "model", -1));
    const std::string name = text(cpu, "model_name");
    for (const auto& f : kX86Families)
        if (vendor == f.vendor && family == f.family && model >= f.model_lo &&
            model <= f.model_hi && name.find(f.name_contains) != std::string::npos)
            return &f.platform;
    return nullptr;
}

double pcie_bytes_per_s(double gigatransfers, int lanes) {
    // 8b/10b up to 5 GT/s, 128b/130b at 8-32 GT/s, 242/256 FLIT payload at 64 GT/s (PCIe 6).
    const double encoding = gigatransfers <= 5   ? 0.8
                            : gigatransfers < 64 ? 128.0 / 130
                                                 : 242.0 / 256;
    return gigatransfers * 1e9 * encoding / 8 * lanes;
}

const plan::GpuSpec* catalog_gpu(std::string_view gpu_name, const plan::HardwareCatalog& catalog) {
    const std::string n = to_lower(gpu_name);
    const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
    // The NVL parts (H100 NVL, H200 NVL) are PCIe cards with other clocks and links: no entry.
    if (has(" nvl")) return nullptr;
    const char* id = nullptr;
    if (has("h200"))
        id = "h200-sxm";
    else if (has("h100"))
        id = has("pcie") ? "h100-pcie" : "h100-sxm";
    else if (has("a100")) {
        const bool pcie = has("pcie"), big = has("80g");
        id = pcie ? (big ? "a100-80g-pcie" : "a100-40g-pcie")
                  : (big ? "a100-80g-sxm" : "a100-40g-sxm");
    } else if (has("b200"))
        id = "b200";
    else if (has("l40s"))
        id = "l40s";
    else if (has("rtx 4090"))
        id = "rtx4090";
    return id ? catalog.gpu(id) : nullptr;
}

Reference reference_for(const BenchRecord& r, const nlohmann::json& machine,
                        const plan::HardwareCatalog& catalog) {
    if (on_emulated_gpu(r)) return none(kEmulatedNoExpectation);
    if (r.bench == "cpu-mem") return cpu_mem(r, machine);
    if (r.bench == "storage") return storage(r);
    if (r.bench == "h2d" || r.bench == "d2h") return host_copy(r);
    return gpu(r, catalog);
}

std::optional<Expectation> expectation_for(const BenchRecord& r, const nlohmann::json& machine,
                                           const plan::HardwareCatalog& catalog) {
    return reference_for(r, machine, catalog).expected;
}

void apply_expectations(std::vector<BenchRecord>& records, const nlohmann::json& machine,
                        const plan::HardwareCatalog& catalog) {
    for (auto& r : records) {
        auto ref = reference_for(r, machine, catalog);
        if (ref.expected) {
            r.expected = ref.expected->value;
            r.expected_source = std::move(ref.expected->source);
            r.expected_floor = ref.expected->floor;
        } else {
            r.no_expectation = std::move(ref.why_not);
        }
    }
}

}  // namespace trainrig::bench

// The built-in GPUs and links. Peak figures are dense (NVIDIA's headline H100/H200/B200 numbers
// include 2:4 sparsity and are halved here). Memory is what nvidia-smi reports as
// memory.total, because that, not the marketing GB, is what a job can fill.
#include <fmt/format.h>

#include "core/units.h"
#include "plan/hardware.h"

namespace trainrig::plan {

namespace {

constexpr const char* kLambda = "Lambda on-demand, 1 GPU (as listed 2026-05-07)";
constexpr const char* kModal = "Modal (as listed 2026-05-07)";
constexpr const char* kVast = "Vast.ai on-demand, low end (as listed 2026-06)";

struct Peaks {
    double fp32, tf32, bf16, fp8;
};

GpuSpec gpu(std::string id, std::string name, Peaks p, double mib, double hbm_tbps, double tdp,
            std::string intra, std::string inter, double price, std::string price_source,
            std::string source) {
    GpuSpec g;
    g.id = std::move(id);
    g.name = std::move(name);
    g.tflops_fp32 = p.fp32;
    g.tflops_tf32 = p.tf32;
    g.tflops_bf16 = g.tflops_fp16 = p.bf16;
    g.tflops_fp8 = p.fp8;
    g.memory_bytes = mib * kMiB;
    g.hbm_bytes_per_s = hbm_tbps * 1e12;
    g.tdp_watts = tdp;
    g.intra_link = std::move(intra);
    g.inter_link = std::move(inter);
    g.usd_per_gpu_hour = price;
    g.price_source = std::move(price_source);
    g.source = std::move(source);
    return g;
}

LinkSpec link(std::string id, std::string name, LinkKind kind, double gbytes_per_s,
              double efficiency, std::string source) {
    return {std::move(id),      std::move(name), kind,
            gbytes_per_s * 1e9, efficiency,      std::move(source)};
}

}  // namespace

HardwareCatalog builtin_hardware() {
    const std::string ampere =
        "NVIDIA A100 datasheet; memory.total from nvidia-smi (driver >= 525)";
    const std::string hopper =
        "NVIDIA Hopper whitepaper Table 3 (dense = sparse / 2); H100 "
        "datasheet; memory.total from nvidia-smi";
    HardwareCatalog c;
    c.gpus = {
        gpu("a100-40g-pcie", "A100 PCIe 40GB", {19.5, 156, 312, 0}, 40960, 1.555, 250, "pcie4-x16",
            "ib-hdr", 0, "", ampere),
        gpu("a100-80g-pcie", "A100 PCIe 80GB", {19.5, 156, 312, 0}, 81920, 1.935, 300, "pcie4-x16",
            "ib-hdr", 0, "", ampere),
        gpu("a100-40g-sxm", "A100 SXM4 40GB", {19.5, 156, 312, 0}, 40960, 1.555, 400, "nvlink3",
            "ib-hdr", 1.48, kLambda, ampere),
        gpu("a100-80g-sxm", "A100 SXM4 80GB", {19.5, 156, 312, 0}, 81920, 2.039, 400, "nvlink3",
            "ib-hdr", 2.50, kModal, ampere),
        gpu("h100-pcie", "H100 PCIe 80GB", {51, 378, 756, 1513}, 81559, 2.0, 350, "pcie5-x16",
            "ib-ndr", 2.86, kLambda, hopper),
        gpu("h100-sxm", "H100 SXM5 80GB", {67, 494.7, 989.4, 1978.9}, 81559, 3.35, 700, "nvlink4",
            "ib-ndr", 3.78, kLambda, hopper),
        gpu("h200-sxm", "H200 SXM 141GB", {67, 494.7, 989.4, 1978.9}, 143771, 4.8, 700, "nvlink4",
            "ib-ndr", 3.50, kVast, hopper + "; H200 datasheet (4.8 TB/s)"),
        gpu("b200", "B200 (HGX, 1000 W)", {80, 1100, 2250, 4500}, 183359, 8.0, 1000, "nvlink5",
            "ib-ndr", 4.49, kVast,
            "NVIDIA HGX B200 figures (dense = sparse / 2); memory.total from nvidia-smi "
            "(NVIDIA/TensorRT-LLM#10278)"),
        gpu("l40s", "L40S 48GB", {91.6, 183, 362, 733}, 46068, 0.864, 350, "pcie4-x16", "eth-100g",
            1.95, kModal, "NVIDIA L40S datasheet (dense); nvidia-smi memory.total"),
        gpu("rtx4090", "GeForce RTX 4090", {82.6, 82.6, 165.2, 330.3}, 24564, 1.008, 450,
            "pcie4-x16-nop2p", "eth-100g", 0.68, kVast,
            "NVIDIA Ada whitepaper App. A (BF16/FP8 with FP32 accumulate, half rate on "
            "GeForce); no P2P on GeForce 40-series"),
    };
    for (auto& g : c.gpus)
        if (g.intra_link.starts_with("pcie")) g.nics_per_node = 2;  // typical PCIe server
    const char* pcie_ring =
        "A100 PCIe all_reduce busbw ~20 GB/s once the ring crosses PCIe "
        "(NVIDIA/nccl-tests#178): 20/31.5";
    const char* no_p2p =
        "8x RTX 5090 all_reduce busbw 28 GB/s of 63 on PCIe 5 without P2P "
        "(NVIDIA/nccl#1639): 28/63";
    c.links = {
        link("pcie4-x16", "PCIe 4.0 x16", LinkKind::kIntraNode, 31.5, 0.63, pcie_ring),
        link("pcie5-x16", "PCIe 5.0 x16", LinkKind::kIntraNode, 63, 0.63,
             std::string("assumed as PCIe 4: ") + pcie_ring),
        link("pcie4-x16-nop2p", "PCIe 4.0 x16 without P2P (through host memory)",
             LinkKind::kIntraNode, 31.5, 0.44, std::string("assumed as PCIe 5: ") + no_p2p),
        link("pcie5-x16-nop2p", "PCIe 5.0 x16 without P2P (through host memory)",
             LinkKind::kIntraNode, 63, 0.44, no_p2p),
        link("nvlink3", "NVLink 3 via NVSwitch (12 links)", LinkKind::kIntraNode, 300, 0.767,
             "8x A100 all_reduce busbw ~230 GB/s (NVIDIA/nccl-tests#149): 230/300"),
        link("nvlink4", "NVLink 4 via NVSwitch (18 links)", LinkKind::kIntraNode, 450, 0.822,
             "8x H100 ring all_reduce busbw ~370 GB/s (NVIDIA/nccl-tests#212): 370/450; NVLS "
             "reaches ~476 for all_reduce"),
        link("nvlink5", "NVLink 5 via NVSwitch (18 links)", LinkKind::kIntraNode, 900, 0.822,
             "assumed as NVLink 4 ring (no measured ring figure); NVL72 NVLS ~840 GB/s "
             "(coreweave/nccl-tests#43)"),
        link("ib-hdr", "InfiniBand HDR 200 Gb/s per NIC", LinkKind::kInterNode, 25, 0.96,
             "DGX A100 multi-node all_reduce 192 GB/s over 8x HDR (NVIDIA/nccl#812): 192/200"),
        link("ib-ndr", "InfiniBand NDR 400 Gb/s per NIC", LinkKind::kInterNode, 50, 0.91,
             "4 nodes of 8x H100 all_reduce busbw 365.8 GB/s over 8x NDR "
             "(NVIDIA/nccl-tests#309): 365.8/400"),
        link("eth-100g", "Ethernet 100 Gb/s per NIC (RoCE)", LinkKind::kInterNode, 12.5, 0.60,
             "2x DGX A100 over 8x 100G, ring ~60 GB/s of 100 (NVIDIA/nccl#812)"),
        link("eth-200g", "Ethernet 200 Gb/s per NIC (RoCE)", LinkKind::kInterNode, 25, 0.60,
             "assumed as 100G RoCE (NVIDIA/nccl#812)"),
        link("eth-400g", "Ethernet 400 Gb/s per NIC (RoCE)", LinkKind::kInterNode, 50, 0.60,
             "assumed as 100G RoCE (NVIDIA/nccl#812)"),
    };
    return c;
}

double peak_flops(const GpuSpec& g, Precision p) {
    switch (p) {
        case Precision::kFp32:
            return g.tflops_fp32 * 1e12;
        case Precision::kTf32:
            return g.tflops_tf32 * 1e12;
        case Precision::kBf16:
            return g.tflops_bf16 * 1e12;
        case Precision::kFp16:
            return g.tflops_fp16 * 1e12;
        case Precision::kFp8:
            return g.tflops_fp8 * 1e12;
    }
    return 0;
}

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::kFp32:
            return "fp32";
        case Precision::kTf32:
            return "tf32";
        case Precision::kBf16:
            return "bf16";
        case Precision::kFp16:
            return "fp16";
        case Precision::kFp8:
            return "fp8";
    }
    return "?";
}

}  // namespace trainrig::plan

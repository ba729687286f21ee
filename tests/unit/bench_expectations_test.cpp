// What each `trainrig bench` measurement should reach: the CPU memory platform table, PCIe link
// rates, GPU names against the plan catalog, and the expectation (value and source) per record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/emulated_gpu.h"
#include "measure/expectations.h"
#include "plan/hardware.h"

namespace trainrig::bench {
namespace {

using json = nlohmann::json;

json x86(const char* vendor, int family, int model, const char* name = "") {
    return {{"vendor", vendor}, {"family", family}, {"model", model}, {"model_name", name}};
}

void expect_relative(double actual, double expected, const std::string& what) {
    EXPECT_NEAR(actual, expected, 1e-9 * expected) << what;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// ---- CPU memory platforms -----------------------------------------------------------------------

TEST(BenchExpectationsCpu, GenoaIsTwelveChannelsOfDdr5_4800) {
    const CpuMemoryPlatform* p =
        cpu_memory_platform(x86("AuthenticAMD", 25, 17, "AMD EPYC 9654 96-Core Processor"));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(contains(p->name, "Genoa")) << p->name;
    EXPECT_EQ(p->channels, 12);
    EXPECT_EQ(p->mega_transfers, 4800);
    EXPECT_DOUBLE_EQ(p->bytes_per_s(), 460.8e9);
    EXPECT_FALSE(std::string(p->source).empty());
}

TEST(BenchExpectationsCpu, FamilyAndModelDecideNotTheName) {
    // A cloud's renamed Genoa part is still a Genoa.
    const CpuMemoryPlatform* p = cpu_memory_platform(x86("AuthenticAMD", 25, 17, "AMD EPYC"));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->channels, 12);
}

TEST(BenchExpectationsCpu, TurinRomeAndSapphireRapids) {
    const CpuMemoryPlatform* turin = cpu_memory_platform(x86("AuthenticAMD", 26, 2));
    ASSERT_NE(turin, nullptr);
    EXPECT_TRUE(contains(turin->name, "Turin")) << turin->name;
    EXPECT_EQ(turin->channels, 12);
    EXPECT_EQ(turin->mega_transfers, 6000);

    const CpuMemoryPlatform* rome = cpu_memory_platform(x86("AuthenticAMD", 23, 49));
    ASSERT_NE(rome, nullptr);
    EXPECT_TRUE(contains(rome->name, "Rome")) << rome->name;
    EXPECT_EQ(rome->channels, 8);
    EXPECT_EQ(rome->mega_transfers, 3200);

    const CpuMemoryPlatform* spr =
        cpu_memory_platform(x86("GenuineIntel", 6, 143, "Intel(R) Xeon(R) Platinum 8480+"));
    ASSERT_NE(spr, nullptr);
    EXPECT_TRUE(contains(spr->name, "Sapphire Rapids")) << spr->name;
    EXPECT_EQ(spr->channels, 8);
    EXPECT_EQ(spr->mega_transfers, 4800);
}

TEST(BenchExpectationsCpu, GraniteRapidsOnlyForThe6900P) {
    const CpuMemoryPlatform* ap =
        cpu_memory_platform(x86("GenuineIntel", 6, 173, "Intel(R) Xeon(R) 6980P"));
    ASSERT_NE(ap, nullptr);
    EXPECT_TRUE(contains(ap->name, "Granite Rapids")) << ap->name;
    EXPECT_EQ(ap->channels, 12);
    EXPECT_EQ(ap->mega_transfers, 6400);
    // The 6700P shares the model number and has 8 channels: no entry rather than a wrong one.
    EXPECT_EQ(cpu_memory_platform(x86("GenuineIntel", 6, 173, "Intel(R) Xeon(R) 6767P")), nullptr);
    EXPECT_EQ(cpu_memory_platform(x86("GenuineIntel", 6, 173)), nullptr);
}

TEST(BenchExpectationsCpu, BergamoSienaAndUnknownCpusHaveNoPlatform) {
    EXPECT_EQ(cpu_memory_platform(x86("AuthenticAMD", 25, 0xa0, "AMD EPYC 9754")), nullptr);
    EXPECT_EQ(cpu_memory_platform(x86("AuthenticAMD", 25, 0xa0, "AMD EPYC 8534P")), nullptr);
    EXPECT_EQ(cpu_memory_platform(x86("GenuineIntel", 6, 85, "Intel(R) Xeon(R) Gold 6248")),
              nullptr);
    EXPECT_EQ(cpu_memory_platform(x86("GenuineIntel", 25, 17)), nullptr);  // vendor counts
    EXPECT_EQ(cpu_memory_platform(json{{"implementer", "0x41"}, {"part", "0xd4f"}}), nullptr);
    EXPECT_EQ(cpu_memory_platform(json::object()), nullptr);
}

// ---- PCIe ---------------------------------------------------------------------------------------

TEST(BenchExpectationsPcie, LinkRatesAfterEncoding) {
    expect_relative(pcie_bytes_per_s(16, 16), 16e9 * 128 / 130 / 8 * 16, "gen4 x16");
    EXPECT_NEAR(pcie_bytes_per_s(16, 16), 31.5e9, 0.01e9);
    EXPECT_NEAR(pcie_bytes_per_s(8, 4), 3.94e9, 0.005e9);
    EXPECT_DOUBLE_EQ(pcie_bytes_per_s(2.5, 1), 0.25e9);  // 8b/10b
    EXPECT_DOUBLE_EQ(pcie_bytes_per_s(5, 1), 0.5e9);
    expect_relative(pcie_bytes_per_s(32, 16), 32e9 * 128 / 130 / 8 * 16, "gen5 x16");
    expect_relative(pcie_bytes_per_s(64, 16), 64e9 * 242 / 256 / 8 * 16, "gen6 x16");
}

// ---- GPU names ----------------------------------------------------------------------------------

TEST(BenchExpectationsGpu, CudaNamesFindTheirCatalogEntry) {
    const plan::HardwareCatalog catalog = plan::builtin_hardware();
    const std::vector<std::pair<const char*, const char*>> names = {
        {"NVIDIA H200", "h200-sxm"},
        {"NVIDIA H100 80GB HBM3", "h100-sxm"},
        {"NVIDIA H100 PCIe", "h100-pcie"},
        {"NVIDIA A100-SXM4-80GB", "a100-80g-sxm"},
        {"NVIDIA A100 80GB PCIe", "a100-80g-pcie"},
        {"NVIDIA A100-SXM4-40GB", "a100-40g-sxm"},
        {"NVIDIA A100-PCIE-40GB", "a100-40g-pcie"},
        {"NVIDIA B200", "b200"},
        {"NVIDIA L40S", "l40s"},
        {"NVIDIA GeForce RTX 4090", "rtx4090"},
    };
    for (const auto& [name, id] : names) {
        const plan::GpuSpec* g = catalog_gpu(name, catalog);
        ASSERT_NE(g, nullptr) << name;
        EXPECT_EQ(g->id, id) << name;
        EXPECT_EQ(g, catalog.gpu(id)) << name;  // the catalog's own entry, not a copy
    }
    EXPECT_EQ(catalog_gpu("Tesla V100-SXM2-32GB", catalog), nullptr);
    EXPECT_EQ(catalog_gpu("Tesla V100", catalog), nullptr);
    EXPECT_EQ(catalog_gpu("", catalog), nullptr);
}

// ---- expectation per record ---------------------------------------------------------------------

BenchRecord record(const char* bench, const char* name, json target, json params = json::object()) {
    BenchRecord r;
    r.bench = bench;
    r.name = name;
    r.target = std::move(target);
    r.params = std::move(params);
    r.unit = "bytes/s";
    r.samples = {1};
    return r;
}

json genoa_machine(int packages, int numa_nodes) {
    return {{"cpu", x86("AuthenticAMD", 25, 17, "AMD EPYC 9654 96-Core Processor")},
            {"packages", packages},
            {"numa_nodes", numa_nodes}};
}

class BenchExpectationFor : public ::testing::Test {
protected:
    plan::HardwareCatalog catalog_ = plan::builtin_hardware();
};

TEST_F(BenchExpectationFor, CpuMemTriadOverAllSocketsOfATwoSocketGenoa) {
    const auto e = expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}, {"threads", 192}}),
                                   genoa_machine(2, 2), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.8 * 0.75 * 2 * 460.8e9, "triad, 2 sockets");
    EXPECT_TRUE(contains(e->source, "12 channels")) << e->source;
    EXPECT_TRUE(contains(e->source, "4800 MT/s")) << e->source;
    EXPECT_TRUE(contains(e->source, "921.6 GB/s")) << e->source;
    EXPECT_TRUE(contains(e->source, "Genoa")) << e->source;
    EXPECT_TRUE(contains(e->source, "all sockets")) << e->source;
}

TEST_F(BenchExpectationFor, CpuMemPerNumaNodeGetsItsShareOfTheChannels) {
    const auto e = expectation_for(record("cpu-mem", "triad", {{"numa_node", 3}, {"threads", 24}}),
                                   genoa_machine(2, 8), catalog_);
    ASSERT_TRUE(e);
    // NPS4 on two sockets: each node has 3 of a socket's 12 channels, an eighth of the machine.
    expect_relative(e->value, 0.8 * 0.75 * 460.8e9 / 4, "triad, one of 8 nodes");
    const auto all = expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}),
                                     genoa_machine(2, 8), catalog_);
    ASSERT_TRUE(all);
    expect_relative(all->value, 8 * e->value, "all sockets, 8 nodes");
    EXPECT_TRUE(contains(e->source, "115.2 GB/s")) << e->source;
    EXPECT_TRUE(contains(e->source, "node")) << e->source;
}

TEST_F(BenchExpectationFor, CpuMemPerNodeLeavesOutMemoryOnlyNodes) {
    // Two sockets in NPS1 plus two CXL memory nodes without cores: a node with cores still
    // holds a whole socket's channels.
    json machine = genoa_machine(2, 4);
    machine["numa_nodes_with_cores"] = 2;
    const auto e =
        expectation_for(record("cpu-mem", "triad", {{"numa_node", 0}}), machine, catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.8 * 0.75 * 460.8e9, "triad, one socket's node");
}

TEST_F(BenchExpectationFor, MembersOfAnotherTypeMeanNoExpectationNotAnException) {
    BenchRecord r = record("hbm", "copy", {{"gpu", 0}, {"gpu_name", nullptr}});
    EXPECT_FALSE(expectation_for(r, json::object(), catalog_));
    json machine = genoa_machine(2, 2);
    machine["cpu"]["vendor"] = 5;
    machine["cpu"]["virtual"] = "no";
    EXPECT_FALSE(expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}), machine, catalog_));
    BenchRecord g = record("gemm", "bf16", {{"gpu_name", "NVIDIA H200"}});
    g.params = {{"dtype", 16}, {"summary", "best"}};
    EXPECT_FALSE(expectation_for(g, json::object(), catalog_));
}

TEST_F(BenchExpectationFor, CpuMemCopyCountsSixteenOfTwentyFourBytes) {
    const auto e = expectation_for(record("cpu-mem", "copy", {{"cpus", "all"}}),
                                   genoa_machine(2, 2), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.8 * 16.0 / 24 * 2 * 460.8e9, "copy, 2 sockets");
    EXPECT_TRUE(contains(e->source, "53 %")) << e->source;
}

TEST_F(BenchExpectationFor, CpuMemNoneOnAVirtualMachineOrAnUnknownCpu) {
    json guest = genoa_machine(2, 2);
    guest["cpu"]["virtual"] = true;
    EXPECT_FALSE(expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}), guest, catalog_));
    json metal = genoa_machine(2, 2);
    metal["cpu"]["virtual"] = false;
    EXPECT_TRUE(expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}), metal, catalog_));
    json unknown = genoa_machine(2, 2);
    unknown["cpu"]["model"] = 0xa0;
    EXPECT_FALSE(expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}), unknown, catalog_));
    EXPECT_FALSE(
        expectation_for(record("cpu-mem", "triad", {{"cpus", "all"}}), json::object(), catalog_));
}

TEST_F(BenchExpectationFor, StorageSequentialReadOnNvmeIsMostOfItsLink) {
    const json nvme = {{"kind", "nvme"}, {"pcie_gts", 16}, {"pcie_width", 4}};
    const auto e = expectation_for(record("storage", "seq-read", nvme), json::object(), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.85 * pcie_bytes_per_s(16, 4), "gen4 x4 NVMe");
    EXPECT_TRUE(contains(e->source, "85 %")) << e->source;
    EXPECT_TRUE(contains(e->source, "16 GT/s x4")) << e->source;
    EXPECT_TRUE(contains(e->source, "7.88 GB/s")) << e->source;
    json narrow = nvme;  // trained at x2 of x4: judged against x4
    narrow["pcie_width"] = 2;
    narrow["pcie_max_width"] = 4;
    const auto n = expectation_for(record("storage", "seq-read", narrow), json::object(), catalog_);
    ASSERT_TRUE(n);
    expect_relative(n->value, e->value, "x2 of x4");
    EXPECT_TRUE(contains(n->source, "it trained at x2")) << n->source;

    EXPECT_FALSE(expectation_for(record("storage", "random-read", nvme), json::object(), catalog_));
    json vm = nvme;
    vm["kind"] = "virtual";
    EXPECT_FALSE(expectation_for(record("storage", "seq-read", vm), json::object(), catalog_));
    EXPECT_FALSE(expectation_for(record("storage", "seq-read", {{"kind", "nvme"}}), json::object(),
                                 catalog_));  // link unknown
}

TEST_F(BenchExpectationFor, PinnedHostCopyFromTheGenerationOrTheRate) {
    const double link = pcie_bytes_per_s(32, 16);
    for (const json& target : {json{{"gpu", 0}, {"pcie_gen", 5}, {"pcie_width", 16}},
                               json{{"gpu", 0}, {"pcie_gts", 32}, {"pcie_width", 16}}}) {
        for (const char* bench : {"h2d", "d2h"}) {
            const auto e =
                expectation_for(record(bench, "pinned", target), json::object(), catalog_);
            ASSERT_TRUE(e) << bench << " " << target.dump();
            expect_relative(e->value, 0.85 * link, target.dump());
            EXPECT_TRUE(contains(e->source, "85 %")) << e->source;
            EXPECT_TRUE(contains(e->source, "32 GT/s x16")) << e->source;
            EXPECT_TRUE(contains(e->source, "63.0 GB/s")) << e->source;
        }
    }
    const json gen4 = {{"gpu", 0}, {"pcie_gen", 4}, {"pcie_width", 16}};
    const auto e4 = expectation_for(record("h2d", "pinned", gen4), json::object(), catalog_);
    ASSERT_TRUE(e4);
    expect_relative(e4->value, 0.85 * pcie_bytes_per_s(16, 16), "gen4 x16");
}

TEST_F(BenchExpectationFor, PinnedHostCopyAtTheWidthTheGpuCanTrainTo) {
    // A link trained at x8 of x16 fails doctor's pci.gpu-link; the bench expects x16's rate, so
    // the halved measurement fails here too instead of passing against x8.
    const json narrow = {{"gpu", 0}, {"pcie_gen", 4}, {"pcie_width", 8}, {"pcie_max_width", 16}};
    const auto e = expectation_for(record("h2d", "pinned", narrow), json::object(), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.85 * pcie_bytes_per_s(16, 16), "x8 of x16");
    EXPECT_TRUE(contains(e->source, "16 GT/s x16 = 31.5 GB/s; it trained at x8")) << e->source;
    const json full = {{"gpu", 0}, {"pcie_gen", 4}, {"pcie_width", 16}, {"pcie_max_width", 16}};
    const auto f = expectation_for(record("h2d", "pinned", full), json::object(), catalog_);
    ASSERT_TRUE(f);
    EXPECT_FALSE(contains(f->source, "trained at")) << f->source;
}

TEST_F(BenchExpectationFor, NoHostCopyExpectationForPageableOrSeveralGpus) {
    const json target = {{"gpu", 0}, {"pcie_gen", 5}, {"pcie_width", 16}};
    EXPECT_FALSE(expectation_for(record("h2d", "pageable", target), json::object(), catalog_));
    json all = target;
    all["gpus"] = {0, 1, 2, 3};
    EXPECT_FALSE(expectation_for(record("h2d", "pinned", all), json::object(), catalog_));
    EXPECT_FALSE(expectation_for(record("h2d", "pinned", {{"gpu", 0}, {"pcie_width", 16}}),
                                 json::object(), catalog_));
}

TEST_F(BenchExpectationFor, HbmCopyOnAnH200) {
    const auto e = expectation_for(record("hbm", "copy", {{"gpu", 0}, {"gpu_name", "NVIDIA H200"}}),
                                   json::object(), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.8 * 4.8e12, "H200 HBM");
    EXPECT_TRUE(contains(e->source, "80 %")) << e->source;
    EXPECT_TRUE(contains(e->source, "4.80 TB/s")) << e->source;
    EXPECT_TRUE(contains(e->source, catalog_.gpu("h200-sxm")->name)) << e->source;
    EXPECT_FALSE(expectation_for(record("hbm", "copy", {{"gpu", 0}, {"gpu_name", "Tesla V100"}}),
                                 json::object(), catalog_));
}

TEST_F(BenchExpectationFor, GemmOnlyForTheBestShapeSummary) {
    const json h100 = {{"gpu", 0}, {"gpu_name", "NVIDIA H100 80GB HBM3"}};
    const auto e =
        expectation_for(record("gemm", "bf16", h100, {{"dtype", "bf16"}, {"summary", "best"}}),
                        json::object(), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.78 * 989.4e12, "H100 SXM bf16");
    EXPECT_TRUE(contains(e->source, "78 %")) << e->source;
    EXPECT_TRUE(contains(e->source, "bf16")) << e->source;
    EXPECT_TRUE(contains(e->source, "989 TFLOP/s")) << e->source;

    const auto fp8 =
        expectation_for(record("gemm", "fp8", h100, {{"dtype", "fp8"}, {"summary", "best"}}),
                        json::object(), catalog_);
    ASSERT_TRUE(fp8);
    expect_relative(fp8->value, 0.78 * 1978.9e12, "H100 SXM fp8");

    EXPECT_FALSE(expectation_for(record("gemm", "bf16", h100, {{"dtype", "bf16"}}), json::object(),
                                 catalog_));
    EXPECT_FALSE(expectation_for(
        record("gemm", "bf16", h100,
               {{"dtype", "bf16"}, {"summary", "shape"}, {"m", 8192}, {"n", 8192}, {"k", 8192}}),
        json::object(), catalog_));
    // The A100 has no fp8 path: no expectation rather than zero.
    EXPECT_FALSE(expectation_for(record("gemm", "fp8", {{"gpu_name", "NVIDIA A100-SXM4-80GB"}},
                                        {{"dtype", "fp8"}, {"summary", "best"}}),
                                 json::object(), catalog_));
}

TEST_F(BenchExpectationFor, BurnUsesTheBf16Rule) {
    const auto e = expectation_for(record("burn", "sustained", {{"gpu_name", "NVIDIA H200"}}),
                                   json::object(), catalog_);
    ASSERT_TRUE(e);
    expect_relative(e->value, 0.78 * 989.4e12, "H200 burn");
    EXPECT_TRUE(contains(e->source, "bf16")) << e->source;
    EXPECT_TRUE(contains(e->source, "78 %")) << e->source;
}

TEST_F(BenchExpectationFor, TrainingOnACataloguedGpu) {
    const json h200 = {{"backend", "cuda"}, {"gpu_name", "NVIDIA H200"}, {"gpus", 8}};
    const auto mfu = expectation_for(record("train", "mfu", h200), json::object(), catalog_);
    ASSERT_TRUE(mfu);
    EXPECT_DOUBLE_EQ(mfu->value, 0.50);
    EXPECT_TRUE(contains(mfu->source, "50 % MFU")) << mfu->source;
    const auto scaling =
        expectation_for(record("train", "scaling", h200), json::object(), catalog_);
    ASSERT_TRUE(scaling);
    EXPECT_DOUBLE_EQ(scaling->value, 0.90);
    EXPECT_TRUE(scaling->floor);  // the acceptance bar itself
    EXPECT_FALSE(mfu->floor);
    // Throughput itself depends on the model and batch: information, not a verdict.
    EXPECT_FALSE(expectation_for(record("train", "tokens", h200), json::object(), catalog_));
    // The CPU backend has no catalog peak.
    EXPECT_FALSE(
        expectation_for(record("train", "mfu", {{"backend", "cpu"}}), json::object(), catalog_));
}

TEST_F(BenchExpectationFor, DataPathBenchmarksHaveNone) {
    EXPECT_FALSE(expectation_for(record("tokenizer", "bytes", json::object()), genoa_machine(2, 2),
                                 catalog_));
    EXPECT_FALSE(expectation_for(record("loader", "batches", json::object()), genoa_machine(2, 2),
                                 catalog_));
}

// Without an expectation a record says why, and the reason names the cause a user can act on
// or accept: a VM, a virtual disk, a CPU or GPU with no reference, a measurement never judged.
TEST_F(BenchExpectationFor, NoExpectationSaysWhy) {
    const auto why = [&](const BenchRecord& r, const json& machine) {
        const auto ref = reference_for(r, machine, catalog_);
        EXPECT_FALSE(ref.expected);
        return ref.why_not;
    };
    json guest = genoa_machine(2, 2);
    guest["cpu"]["virtual"] = true;
    EXPECT_TRUE(
        contains(why(record("cpu-mem", "triad", {{"cpus", "all"}}), guest), "virtual machine"));
    json unknown = genoa_machine(2, 2);
    unknown["cpu"]["model"] = 0xa0;
    EXPECT_TRUE(contains(why(record("cpu-mem", "triad", {{"cpus", "all"}}), unknown),
                         "no memory-channel reference for this CPU (AMD EPYC 9654"));
    EXPECT_EQ(why(record("storage", "seq-read", {{"kind", "virtual"}}), json::object()),
              "virtual disk: the storage ceiling is unknown");
    EXPECT_TRUE(contains(why(record("storage", "seq-read", {{"kind", "ssd"}}), json::object()),
                         "only NVMe drives are judged"));
    EXPECT_TRUE(
        contains(why(record("hbm", "copy", {{"gpu_name", "Radeon Instinct"}}), json::object()),
                 "no catalog entry for Radeon Instinct"));
    EXPECT_EQ(why(record("tokenizer", "bytes", json::object()), json::object()),
              "no hardware reference for this measurement");
    // An emulated device matches a catalog name, and is still held to nothing.
    for (const char* bench : {"hbm", "gemm", "h2d", "nccl", "train"})
        EXPECT_EQ(
            why(record(bench, "pinned", {{"gpu_name", "emulated A100 SXM4 80GB"}}), json::object()),
            kEmulatedNoExpectation)
            << bench;
    // Where there is an expectation, there is no reason.
    const auto ref = reference_for(
        record("storage", "seq-read", {{"kind", "nvme"}, {"pcie_gts", 16}, {"pcie_width", 4}}),
        json::object(), catalog_);
    EXPECT_TRUE(ref.expected);
    EXPECT_EQ(ref.why_not, "");
}

TEST_F(BenchExpectationFor, ApplySetsValueAndSourceWhereThereIsOne) {
    std::vector<BenchRecord> records = {
        record("cpu-mem", "triad", {{"cpus", "all"}}),
        record("tokenizer", "tokens", json::object()),
        record("storage", "seq-read", {{"kind", "nvme"}, {"pcie_gts", 8}, {"pcie_width", 4}}),
    };
    apply_expectations(records, genoa_machine(1, 1), catalog_);
    ASSERT_TRUE(records[0].expected);
    expect_relative(*records[0].expected, 0.8 * 0.75 * 460.8e9, "one socket");
    EXPECT_TRUE(contains(records[0].expected_source, "460.8 GB/s")) << records[0].expected_source;
    EXPECT_FALSE(records[1].expected);
    EXPECT_EQ(records[1].expected_source, "");
    ASSERT_TRUE(records[2].expected);
    expect_relative(*records[2].expected, 0.85 * pcie_bytes_per_s(8, 4), "gen3 x4");
    EXPECT_TRUE(contains(records[2].expected_source, "8 GT/s x4")) << records[2].expected_source;
}

}  // namespace
}  // namespace trainrig::bench

// GPU rules on hand-built NVML facts: each rule's pass, problem, unsupported field, lost GPU and
// NVML failure.
#include <gtest/gtest.h>

#include "nvml_builder.h"
#include "policy/gpu_health.h"
#include "rule_test_util.h"

namespace trainrig::test {
namespace {

const char* kGpuRules[] = {"gpu.count",         "gpu.uniform",       "gpu.persistence",
                           "gpu.power-limit",   "gpu.mig",           "gpu.ecc",
                           "gpu.remapped-rows", "gpu.retired-pages", "gpu.temperature",
                           "gpu.clock-events",  "gpu.pcie-link",     "gpu.pcie-replay",
                           "gpu.nvlink",        "gpu.p2p-topology",  "gpu.cpu-affinity"};

TEST(GpuRules, HealthyMachinePassesEveryRule) {
    auto s = healthy_gpus();
    for (const char* id : kGpuRules) {
        auto f = judge_one(id, s);
        if (std::string(id) == "gpu.retired-pages") {
            EXPECT_STATUS(f, kSkip);  // A100 remaps rows instead
        } else {
            EXPECT_STATUS(f, kPass);
        }
    }
}

TEST(GpuRules, NoDriverSkipsEveryRuleButTheCountOfGpusOnTheBus) {
    auto s = healthy_gpus();
    s.nvml = Fact<NvmlFacts>::failed(
        {Errc::kNotFound, "libnvidia-ml.so.1 was not found by the dynamic loader"});
    for (const char* id : kGpuRules) {
        auto f = judge_one(id, s);
        if (std::string(id) == "gpu.count") {
            // GPUs on the bus that no driver answers for: the machine cannot run a job.
            EXPECT_STATUS(f, kFail);
            EXPECT_NE(f.summary.find("no driver answers"), std::string::npos) << f.summary;
            continue;
        }
        EXPECT_STATUS(f, kSkip);
        EXPECT_NE(f.summary.find("no NVIDIA driver"), std::string::npos) << f.summary;
    }
    s.pci_devices = Fact<std::vector<PciDevice>>::known({});  // and none on the bus: nothing
    EXPECT_STATUS(judge_one("gpu.count", s), kSkip);
    RuleOptions expect;
    expect.expect_gpus = 8;  // unless GPUs are expected
    EXPECT_STATUS(judge_one("gpu.count", s, expect), kFail);
}

TEST(GpuRules, NotProbedUnderRootSkips) {
    auto s = healthy_gpus();
    s.nvml = Fact<NvmlFacts>::failed({Errc::kUnsupported, "NVML was not read: --root"});
    EXPECT_STATUS(judge_one("gpu.ecc", s), kSkip);
}

TEST(GpuRules, NvmlThatDidNotAnswerIsAnError) {
    auto s = healthy_gpus();
    s.nvml = Fact<NvmlFacts>::failed(
        {Errc::kIo,
         "NVML did not answer within 5 s (no return from nvmlDeviceGetTemperature "
         "on GPU 1)"});
    for (const char* id : kGpuRules) {
        auto f = judge_one(id, s);
        EXPECT_STATUS(f, kError);
        EXPECT_NE(f.summary.find("did not answer"), std::string::npos);
    }
}

TEST(GpuCount, LostGpuFails) {
    auto s = healthy_gpus();
    nvml_at(s, 1).lost = true;
    auto f = judge_one("gpu.count", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("GPU 1"), std::string::npos);
    EXPECT_NE(f.summary.find("lost"), std::string::npos);
}

// A lost GPU's bus id cannot be read, so it is among the GPUs NVML does not list: the count
// and the list must agree, and the lost one is not a GPU "the driver never took" when the kernel
// log names it.
TEST(GpuCount, ALostGpuIsCountedOnceAndNamedByTheKernelLog) {
    auto s = healthy_gpus();
    auto& lost = nvml_at(s, 1);
    lost.lost = true;
    const std::string lost_address = lost.bus_id.value();
    lost.bus_id = {};
    s.nvml.value().gpus.pop_back();  // and one the driver never took
    const auto count_in = [](const std::string& summary) {
        const std::string list = summary.substr(summary.rfind(": ") + 2);
        return std::to_string(std::count(list.begin(), list.end(), ',') + 1);
    };
    // Without a kernel log: every GPU NVML misses is listed, and the count says so.
    auto f = judge_one("gpu.count", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find(count_in(f.summary) + " GPU(s) on the PCI bus"), std::string::npos)
        << f.summary;
    EXPECT_NE(f.summary.find("1 of them the lost one(s)"), std::string::npos) << f.summary;
    // The kernel log names the lost GPU: it is not listed among those never taken.
    KernelLog log;
    log.records.push_back({3, 1, 1,
                           "NVRM: Xid (PCI:" + lost_address.substr(0, 10) +
                               "): 79, pid=2345, name=python3, GPU has fallen off the bus."});
    s.kernel_log = Fact<KernelLog>::known(log);
    f = judge_one("gpu.count", s);
    EXPECT_NE(f.summary.find("1 GPU(s) on the PCI bus that the driver does not list besides the "
                             "lost one(s): "),
              std::string::npos)
        << f.summary;
    EXPECT_EQ(f.summary.find(lost_address), std::string::npos) << f.summary;
    EXPECT_NE(f.summary.find("0000:c1:00.0"), std::string::npos) << f.summary;
}

TEST(GpuCount, GpuOnTheBusButNotInNvmlFails) {
    auto s = healthy_gpus();
    s.nvml.value().gpus.pop_back();
    auto f = judge_one("gpu.count", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("0000:c1:00.0"), std::string::npos);
}

TEST(GpuCount, ExpectGpus) {
    auto s = healthy_gpus();
    RuleOptions o;
    o.expect_gpus = 4;
    EXPECT_STATUS(judge_one("gpu.count", s, o), kPass);
    o.expect_gpus = 8;
    EXPECT_STATUS(judge_one("gpu.count", s, o), kFail);
}

TEST(GpuUniform, MixedKindsWarnAndOneGpuSkips) {
    auto s = healthy_gpus();
    nvml_at(s, 3).name = known<std::string>("NVIDIA A100-SXM4-40GB");
    nvml_at(s, 3).memory_total_bytes = known<uint64_t>(42949672960ull);
    EXPECT_STATUS(judge_one("gpu.uniform", s), kWarn);
    s.nvml.value().gpus.resize(1);
    EXPECT_STATUS(judge_one("gpu.uniform", s), kSkip);
}

TEST(GpuPersistence, OffWarnsUnsupportedSkips) {
    auto s = healthy_gpus();
    nvml_at(s, 2).persistence_mode = known(false);
    EXPECT_STATUS(judge_one("gpu.persistence", s), kWarn);
    for (auto& g : s.nvml.value().gpus) g.persistence_mode = unsupported<bool>();
    EXPECT_STATUS(judge_one("gpu.persistence", s), kSkip);
}

TEST(GpuPowerLimit, BelowTheDefaultWarnsWithItsShare) {
    auto s = healthy_gpus();  // 400 W of a 400 W default
    nvml_at(s, 1).power_limit_w = known(400.0 * (1 - policy::kPowerLimitSlack));
    EXPECT_STATUS(judge_one("gpu.power-limit", s), kPass);  // the boundary counts as the default
    nvml_at(s, 1).power_limit_w = known(395.0);
    auto f = judge_one("gpu.power-limit", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("GPU 1 is limited to 395 W, 98.8 % of its default 400 W"),
              std::string::npos)
        << f.summary;
    EXPECT_FALSE(f.remedy.empty());
    nvml_at(s, 1).power_limit_w = known(450.0);  // raised above the default: the part's choice
    EXPECT_STATUS(judge_one("gpu.power-limit", s), kPass);
}

TEST(GpuPowerLimit, UnsupportedSkipsAndAnOlderSnapshotIsNoError) {
    auto s = healthy_gpus();
    for (auto& g : s.nvml.value().gpus)
        g.power_default_limit_w = unsupported<double>("nvmlDeviceGetPowerManagementDefaultLimit");
    EXPECT_STATUS(judge_one("gpu.power-limit", s), kSkip);
    for (auto& g : s.nvml.value().gpus) g.power_default_limit_w = Fact<double>::absent();
    auto f = judge_one("gpu.power-limit", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("the snapshot does not record power limits"), std::string::npos);
}

TEST(GpuMig, OnOrChangingWarnsPartsWithoutMigSkip) {
    auto s = healthy_gpus();
    nvml_at(s, 2).mig = known(MigMode{true, true});
    auto f = judge_one("gpu.mig", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("MIG is on for GPU 2"), std::string::npos) << f.summary;
    nvml_at(s, 2).mig = known(MigMode{false, true});
    f = judge_one("gpu.mig", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("GPU 2's MIG mode becomes enabled at its next reset"),
              std::string::npos)
        << f.summary;
    for (auto& g : s.nvml.value().gpus) g.mig = unsupported<MigMode>("nvmlDeviceGetMigMode");
    EXPECT_STATUS(judge_one("gpu.mig", s), kSkip);
}

TEST(GpuEcc, Cases) {
    auto s = healthy_gpus();
    nvml_at(s, 0).ecc.volatile_uncorrected = known<uint64_t>(2);
    EXPECT_STATUS(judge_one("gpu.ecc", s), kFail);
    s = healthy_gpus();
    nvml_at(s, 0).ecc.aggregate_uncorrected = known<uint64_t>(1);
    EXPECT_STATUS(judge_one("gpu.ecc", s), kWarn);
    s = healthy_gpus();
    nvml_at(s, 1).ecc.enabled = known(false);
    nvml_at(s, 1).ecc.enabled_pending = known(false);
    EXPECT_STATUS(judge_one("gpu.ecc", s), kFail);
    s = healthy_gpus();
    nvml_at(s, 1).ecc.enabled_pending = known(false);
    EXPECT_STATUS(judge_one("gpu.ecc", s), kWarn);
    for (auto& g : s.nvml.value().gpus) g.ecc.enabled = unsupported<bool>("nvmlDeviceGetEccMode");
    EXPECT_STATUS(judge_one("gpu.ecc", s), kSkip);
}

TEST(GpuEcc, NoPermissionIsAnErrorNotAPass) {
    auto s = healthy_gpus();
    nvml_at(s, 0).ecc.enabled =
        Fact<bool>::failed({Errc::kPermission, "nvmlDeviceGetEccMode: Insufficient Permissions"});
    auto f = judge_one("gpu.ecc", s);
    EXPECT_STATUS(f, kError);
    EXPECT_NE(f.summary.find("GPU 0"), std::string::npos);
}

TEST(GpuRemappedRows, PendingAndFailureFailUncorrectableWarns) {
    auto s = healthy_gpus();
    nvml_at(s, 0).remapped_rows = known(RemappedRows{0, 1, false, false});
    EXPECT_STATUS(judge_one("gpu.remapped-rows", s), kWarn);
    nvml_at(s, 0).remapped_rows = known(RemappedRows{0, 1, true, false});
    EXPECT_STATUS(judge_one("gpu.remapped-rows", s), kFail);
    nvml_at(s, 0).remapped_rows = known(RemappedRows{0, 0, false, true});
    EXPECT_STATUS(judge_one("gpu.remapped-rows", s), kFail);
}

TEST(GpuRetiredPages, PendingFailsDoubleBitWarns) {
    auto s = healthy_gpus();
    RetiredPages p;
    p.pending = known(false);
    p.double_bit = 2;
    nvml_at(s, 0).retired_pages = known(p);
    EXPECT_STATUS(judge_one("gpu.retired-pages", s), kWarn);
    p.pending = known(true);
    nvml_at(s, 0).retired_pages = known(p);
    EXPECT_STATUS(judge_one("gpu.retired-pages", s), kFail);
}

TEST(GpuTemperature, MarginToSlowdown) {
    auto s = healthy_gpus();
    nvml_at(s, 2).temperature_c = known<int64_t>(86);
    EXPECT_STATUS(judge_one("gpu.temperature", s), kWarn);
    nvml_at(s, 2).temperature_c = known<int64_t>(89);
    EXPECT_STATUS(judge_one("gpu.temperature", s), kFail);
    nvml_at(s, 2).temperature_c = known<int64_t>(70);
    EXPECT_STATUS(judge_one("gpu.temperature", s), kPass);
}

TEST(GpuClockEvents, ReasonsByBit) {
    auto s = healthy_gpus();
    for (uint64_t bit : {0x8ull, 0x20ull, 0x40ull, 0x80ull}) {
        nvml_at(s, 0).clock_event_reasons = known<uint64_t>(bit);
        EXPECT_STATUS(judge_one("gpu.clock-events", s), kFail);
    }
    // A software power cap is a GPU at its power limit, as at full load: reported, not flagged.
    nvml_at(s, 0).clock_event_reasons = known<uint64_t>(0x4);
    auto capped = judge_one("gpu.clock-events", s);
    EXPECT_STATUS(capped, kPass);
    EXPECT_NE(capped.evidence.back().find("power limit"), std::string::npos);
    nvml_at(s, 0).clock_event_reasons = known<uint64_t>(0x1 | 0x2 | 0x10 | 0x100);
    EXPECT_STATUS(judge_one("gpu.clock-events", s), kPass);
    nvml_at(s, 0).clock_event_reasons = known<uint64_t>(0);
    EXPECT_STATUS(judge_one("gpu.clock-events", s), kPass);
}

TEST(GpuPcieLink, NarrowLinkFailsIdleDownshiftPasses) {
    auto s = healthy_gpus();
    nvml_at(s, 0).pcie.gen = known<int64_t>(1);  // idle (reasons 0x1): normal
    EXPECT_STATUS(judge_one("gpu.pcie-link", s), kPass);
    nvml_at(s, 0).clock_event_reasons = known<uint64_t>(0);
    EXPECT_STATUS(judge_one("gpu.pcie-link", s), kWarn);
    s = healthy_gpus();
    nvml_at(s, 1).pcie.width = known<int64_t>(8);
    auto f = judge_one("gpu.pcie-link", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("x8 of x16"), std::string::npos);
    s = healthy_gpus();
    nvml_at(s, 1).pcie.gpu_gen_max = known<int64_t>(5);  // a Gen5 GPU in a Gen4 slot
    EXPECT_STATUS(judge_one("gpu.pcie-link", s), kWarn);
}

TEST(GpuPcieReplay, RateAgainstDcgmLimit) {
    auto s = healthy_gpus();
    // Gen4 x16: 0.96 * 16 = 15.36 per minute. One day = 1440 minutes.
    nvml_at(s, 0).pcie.replay_count = known<uint64_t>(15 * 1440);
    EXPECT_STATUS(judge_one("gpu.pcie-replay", s), kPass);
    nvml_at(s, 0).pcie.replay_count = known<uint64_t>(16 * 1440);
    EXPECT_STATUS(judge_one("gpu.pcie-replay", s), kWarn);
    s.host.uptime_seconds = Fact<double>::absent();
    EXPECT_STATUS(judge_one("gpu.pcie-replay", s), kSkip);
}

TEST(GpuNvlink, SxmPartWithALinkDownFails) {
    auto s = healthy_gpus();
    nvml_at(s, 2).nvlinks.value()[5].active = false;
    auto f = judge_one("gpu.nvlink", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("11 of its 12"), std::string::npos);
}

TEST(GpuNvlink, LinksRightAfterBootAreNotJudgedYet) {
    // Links train after the driver loads (policy::kLinkTrainingGraceSeconds): down at 2 min of
    // uptime is not yet a fault; down at the grace's end is.
    auto s = healthy_gpus();
    nvml_at(s, 2).nvlinks.value()[5].active = false;
    s.host.uptime_seconds = known(120.0);
    auto f = judge_one("gpu.nvlink", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("GPU 2 with links down has"), std::string::npos) << f.summary;
    EXPECT_NE(f.summary.find("up only 2.00 min"), std::string::npos) << f.summary;
    s.host.uptime_seconds = known(policy::kLinkTrainingGraceSeconds);
    EXPECT_STATUS(judge_one("gpu.nvlink", s), kFail);
    // A healthy machine just booted passes as always.
    auto fresh = healthy_gpus();
    fresh.host.uptime_seconds = known(30.0);
    EXPECT_STATUS(judge_one("gpu.nvlink", fresh), kPass);
}

TEST(GpuNvlink, PcieCardsWithoutBridgePassPartialBridgeWarns) {
    auto s = healthy_gpus();
    for (auto& g : s.nvml.value().gpus) {
        g.pci_device_id = known<uint64_t>(0x2331);  // H100 PCIe: bridge links only
        for (auto& l : g.nvlinks.value()) l.active = false;
    }
    EXPECT_STATUS(judge_one("gpu.nvlink", s), kPass);
    for (int k = 0; k < 4; ++k) nvml_at(s, 0).nvlinks.value()[k].active = true;
    EXPECT_STATUS(judge_one("gpu.nvlink", s), kWarn);
}

TEST(GpuNvlink, NoNvlinkSkipsAndOneGpuSkips) {
    auto s = healthy_gpus();
    for (auto& g : s.nvml.value().gpus) g.nvlinks = unsupported<std::vector<NvLink>>();
    EXPECT_STATUS(judge_one("gpu.nvlink", s), kSkip);
    s = healthy_gpus();
    s.nvml.value().gpus.resize(1);
    EXPECT_STATUS(judge_one("gpu.nvlink", s), kSkip);
}

TEST(GpuP2pTopology, MixedNvlinkAndSysWarns) {
    auto s = healthy_gpus();
    // Take GPU 3's links away: its pairs with 0 and 1 now cross sockets over PCIe.
    for (auto& g : s.nvml.value().gpus)
        for (auto& l : g.nvlinks.value())
            if (g.index == 3 || (l.remote_bus_id.is_known() && l.remote_bus_id.value() == kBus[3]))
                l.active = false;
    auto f = judge_one("gpu.p2p-topology", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("0-3"), std::string::npos);
    // Right after boot the links may still be training: the same paths are not yet judged
    // (gpu.nvlink's grace), and are from the grace's end on.
    s.host.uptime_seconds = known(120.0);
    f = judge_one("gpu.p2p-topology", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("may still be training"), std::string::npos) << f.summary;
    s.host.uptime_seconds = known(policy::kLinkTrainingGraceSeconds);
    EXPECT_STATUS(judge_one("gpu.p2p-topology", s), kWarn);
}

TEST(GpuCpuAffinity, AllCpusOnTwoNodesWarnsMismatchWarns) {
    auto s = healthy_gpus();
    nvml_at(s, 0).cpu_affinity = known<std::string>("0-63");
    EXPECT_STATUS(judge_one("gpu.cpu-affinity", s), kWarn);
    s = healthy_gpus();
    gpu_at(s, 0).local_cpulist = known<std::string>("16-31,48-63");
    EXPECT_STATUS(judge_one("gpu.cpu-affinity", s), kWarn);
}

}  // namespace
}  // namespace trainrig::test

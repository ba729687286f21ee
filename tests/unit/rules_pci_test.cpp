// pci.gpu-visible, pci.gpu-bar, pci.gpu-link on in-memory snapshots.
#include <gtest/gtest.h>

#include "nvml_builder.h"
#include "rule_test_util.h"

namespace trainrig::test {
namespace {

TEST(GpuVisible, PassesWhenEveryGpuIsBound) {
    auto f = judge_one("pci.gpu-visible", healthy());
    EXPECT_STATUS(f, kPass);
    EXPECT_NE(f.summary.find("4 of 4"), std::string::npos);
}

TEST(GpuVisible, FailsWithKernelLogEvidenceAndAbove4gRemedy) {
    auto s = healthy();
    gpu_at(s, 2).driver = Fact<std::string>::absent();
    gpu_at(s, 3).driver = Fact<std::string>::absent();
    s.nvidia.gpus = Fact<std::vector<std::string>>::known({"0000:01:00.0", "0000:41:00.0"});
    s.kernel_log.value().records.push_back(
        kmsg(10, "pci 0000:81:00.0: BAR 1: no space for [mem size 0x2000000000 64bit pref]"));
    s.kernel_log.value().records.push_back(kmsg(11, "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:c1:00.0)"));
    auto f = judge_one("pci.gpu-visible", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("2 of 4"), std::string::npos) << f.summary;
    EXPECT_TRUE(any_contains(f.evidence, "BAR 1: no space"));
    EXPECT_NE(f.remedy.find("Above 4G Decoding"), std::string::npos);
}

TEST(GpuVisible, NewerKernelWordingAlsoPointsAtAbove4g) {
    auto s = healthy();
    gpu_at(s, 3).driver = Fact<std::string>::absent();
    s.nvidia.gpus =
        Fact<std::vector<std::string>>::known({"0000:01:00.0", "0000:41:00.0", "0000:81:00.0"});
    s.kernel_log.value().records.push_back(kmsg(
        10, "pci 0000:c1:00.0: BAR 1 [mem size 0x2000000000 64bit pref]: can't assign; no space"));
    auto f = judge_one("pci.gpu-visible", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.remedy.find("Above 4G Decoding"), std::string::npos);
}

TEST(GpuVisible, GpuListedByDriverCountsAsVisible) {
    auto s = healthy();
    gpu_at(s, 0).driver = Fact<std::string>::absent();  // /proc/driver/nvidia/gpus still lists it
    EXPECT_STATUS(judge_one("pci.gpu-visible", s), kPass);
}

TEST(GpuVisible, ExpectGpusCatchesGpusHiddenFromTheBus) {
    RuleOptions o;
    o.expect_gpus = 8;
    auto f = judge_one("pci.gpu-visible", healthy(), o);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("4 of 8"), std::string::npos);
}

TEST(GpuVisible, SkipsWithoutGpusAndWithoutDriver) {
    auto s = healthy();
    s.pci_devices = Fact<std::vector<PciDevice>>::known({});
    EXPECT_STATUS(judge_one("pci.gpu-visible", s), kSkip);
    auto t = healthy();
    t.nvidia.loaded = false;
    EXPECT_STATUS(judge_one("pci.gpu-visible", t), kSkip);
}

TEST(GpuVisible, AudioFunctionIsNotAGpu) {
    auto s = healthy();
    auto audio = gpu("0000:01:00.1", 0x22ba);
    audio.class_code = Fact<uint64_t>::known(0x040300);
    audio.driver = Fact<std::string>::known("snd_hda_intel");
    s.pci_devices.value().push_back(audio);
    EXPECT_STATUS(judge_one("pci.gpu-visible", s), kPass);
}

TEST(GpuVisible, GarbledInputsAreErrors) {
    auto s = healthy();
    s.pci_devices =
        garbled<std::vector<PciDevice>>("cannot list /sys/bus/pci/devices: Permission denied");
    EXPECT_STATUS(judge_one("pci.gpu-visible", s), kError);
    auto t = healthy();
    gpu_at(t, 1).class_code = garbled<uint64_t>();
    EXPECT_STATUS(judge_one("pci.gpu-visible", t), kError);
}

TEST(GpuBar, PassesWithFullSizeBar1) { EXPECT_STATUS(judge_one("pci.gpu-bar", healthy()), kPass); }

TEST(GpuBar, FailsWhenBar1IsUnassigned) {
    auto s = healthy();
    gpu_at(s, 2).resources.value()[1] = {0, 0, 0};
    auto f = judge_one("pci.gpu-bar", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("0000:81:00.0"), std::string::npos);
    EXPECT_TRUE(any_contains(f.evidence, "unassigned"));
}

TEST(GpuBar, SixtyFourBitBar0MovesBar1ToResource2) {
    // Seen on an H200 in a VM: BAR0 is 64-bit (resources 0-1), BAR1 256 GiB is resource 2.
    auto s = healthy();
    s.pci_devices.value().resize(1);
    gpu_at(s, 0).device = Fact<uint64_t>::known(0x2335);
    gpu_at(s, 0).resources =
        Fact<std::vector<PciResource>>::known({bar(0xf0000000, 64 << 20, 0x140204),
                                               {0, 0, 0},
                                               bar(0x4000000000, 256ull << 30),
                                               {0, 0, 0},
                                               bar(0x8000000000, 32 << 20),
                                               {0, 0, 0},
                                               {0, 0, 0}});
    auto f = judge_one("pci.gpu-bar", s);
    EXPECT_STATUS(f, kPass);
    EXPECT_TRUE(any_contains(f.evidence, "256 GiB"));
    gpu_at(s, 0).resources.value()[2] = {0, 0, 0};
    auto unassigned = judge_one("pci.gpu-bar", s);
    EXPECT_STATUS(unassigned, kFail);
    EXPECT_TRUE(any_contains(unassigned.evidence, "resource line 3"));
}

TEST(GpuBar, WarnsWhenDatacentreBarIsSmallerThanMemory) {
    auto s = healthy();
    gpu_at(s, 0).resources.value()[1] = bar(0xe0000000, 256 << 20);
    EXPECT_STATUS(judge_one("pci.gpu-bar", s), kWarn);
}

TEST(GpuBar, GeforceSmallBarIsNormal) {
    auto s = healthy();
    s.pci_devices.value().resize(1);
    gpu_at(s, 0).device = Fact<uint64_t>::known(0x2684);
    gpu_at(s, 0).resources.value()[1] = bar(0xe0000000, 256 << 20);
    EXPECT_STATUS(judge_one("pci.gpu-bar", s), kPass);
}

TEST(GpuBar, MissingOrGarbledResourceIsAnError) {
    auto s = healthy();
    gpu_at(s, 0).resources = garbled<std::vector<PciResource>>();
    EXPECT_STATUS(judge_one("pci.gpu-bar", s), kError);
    auto t = healthy();
    gpu_at(t, 0).resources = Fact<std::vector<PciResource>>::absent();
    EXPECT_STATUS(judge_one("pci.gpu-bar", t), kError);
    auto u = healthy();
    gpu_at(u, 0).resources = Fact<std::vector<PciResource>>::known({{0, 0, 0}});
    EXPECT_STATUS(judge_one("pci.gpu-bar", u), kError);
}

TEST(GpuLink, PassesAtFullWidthAndSpeed) {
    EXPECT_STATUS(judge_one("pci.gpu-link", healthy()), kPass);
}

TEST(GpuLink, NarrowLinkFails) {
    auto s = healthy();
    gpu_at(s, 1).current_link_width = Fact<int64_t>::known(8);
    auto f = judge_one("pci.gpu-link", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("x8 of x16"), std::string::npos);
}

TEST(GpuLink, SpeedIsJudgedUnderLoadAsGpuPcieLinkJudgesIt) {
    // Without the driver's word a GPU counts as idle, and an idle GPU lowers its link speed.
    auto s = healthy();
    gpu_at(s, 1).current_link_speed = Fact<double>::known(2.5);
    auto f = judge_one("pci.gpu-link", s);
    EXPECT_STATUS(f, kPass);
    EXPECT_NE(f.summary.find("lower speed while idle"), std::string::npos) << f.summary;
    // With NVML: idle (the builder's reasons, 0x1) passes both rules, busy warns in both.
    auto n = healthy_gpus();
    gpu_at(n, 1).current_link_speed = Fact<double>::known(2.5);
    n.nvml.value().gpus[1].pcie.gen = known<int64_t>(1);
    EXPECT_STATUS(judge_one("pci.gpu-link", n), kPass);
    EXPECT_STATUS(judge_one("gpu.pcie-link", n), kPass);
    n.nvml.value().gpus[1].clock_event_reasons = known<uint64_t>(0);
    auto busy = judge_one("pci.gpu-link", n);
    EXPECT_STATUS(busy, kWarn);
    EXPECT_NE(busy.summary.find("2.5 of 16 GT/s while busy"), std::string::npos) << busy.summary;
    EXPECT_STATUS(judge_one("gpu.pcie-link", n), kWarn);
}

TEST(GpuLink, MissingAttributesSkipGarbledAreErrors) {
    auto s = healthy();
    for (auto& g : s.pci_devices.value()) g.current_link_width = Fact<int64_t>::absent();
    EXPECT_STATUS(judge_one("pci.gpu-link", s), kSkip);
    auto t = healthy();
    gpu_at(t, 0).max_link_width = garbled<int64_t>();
    EXPECT_STATUS(judge_one("pci.gpu-link", t), kError);
}

}  // namespace
}  // namespace trainrig::test

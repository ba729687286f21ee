// Xid, fallen-off-the-bus and AER message scanners, and the Xid catalog.
#include "doctor/kmsg_events.h"

#include <gtest/gtest.h>

#include "doctor/xid_catalog.h"

namespace trainrig {
namespace {

TEST(XidParse, CurrentAndOldFormats) {
    auto x = parse_xid(
        "NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has fallen off the bus.");
    ASSERT_TRUE(x);
    EXPECT_EQ(x->gpu, "0000:41:00");
    EXPECT_EQ(x->code, 79);
    EXPECT_EQ(x->detail, "pid=2345, name=python3, GPU has fallen off the bus.");
    auto old = parse_xid("NVRM: Xid (0000:01:00): 13, Graphics Exception");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->code, 13);
    auto bare = parse_xid("NVRM: Xid (PCI:0000:01:00): 48");
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->code, 48);
}

TEST(XidParse, RejectsLookalikes) {
    EXPECT_FALSE(parse_xid("NVRM: loading NVIDIA UNIX x86_64 Kernel Module"));
    EXPECT_FALSE(parse_xid("NVRM: Xid (PCI:0000:41:00): abc, pid=1"));
    EXPECT_FALSE(parse_xid("NVRM: Xid (PCI:0000:41:00): 79x"));
    EXPECT_FALSE(parse_xid("NVRM: Xid (): 79,"));
    EXPECT_FALSE(parse_xid("NVRM: Xid (PCI:0000:41:00"));
}

TEST(FallenOffBus, GpuAddress) {
    EXPECT_EQ(*parse_fallen_off_bus("NVRM: GPU 0000:41:00.0: GPU has fallen off the bus."),
              "0000:41:00.0");
    EXPECT_FALSE(
        parse_fallen_off_bus("NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus."));
    EXPECT_FALSE(parse_fallen_off_bus("NVRM: GPU 0000:41:00.0: RmInitAdapter failed!"));
}

TEST(AerParse, SeveritiesInOldAndCurrentKernelWording) {
    struct Case {
        const char* line;
        const char* device;
        AerSeverity severity;
    };
    const Case cases[] = {
        // Up to Linux 6.x: Corrected / Uncorrected, "AER: " prefix optional.
        {"pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
         "(Receiver ID)",
         "0000:00:03.1", AerSeverity::kCorrected},
        {"nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), "
         "type=Transaction Layer, (Requester ID)",
         "0000:41:00.0", AerSeverity::kNonFatal},
        {"pcieport 0000:80:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
         "Layer",
         "0000:80:01.1", AerSeverity::kFatal},
        // Current kernels: Correctable / Uncorrectable.
        {"pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Correctable, type=Physical Layer, "
         "(Receiver ID)",
         "0000:00:03.1", AerSeverity::kCorrected},
        {"nvidia 0000:18:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), "
         "type=Transaction Layer, (Requester ID)",
         "0000:18:00.0", AerSeverity::kNonFatal},
        {"nvidia 0000:18:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), "
         "type=Inaccessible, (Unregistered Agent ID)",
         "0000:18:00.0", AerSeverity::kFatal},
    };
    for (const auto& c : cases) {
        auto e = parse_aer(c.line);
        ASSERT_TRUE(e) << c.line;
        EXPECT_EQ(e->device, c.device) << c.line;
        EXPECT_EQ(e->severity, c.severity) << c.line;
    }
    EXPECT_FALSE(parse_aer("pcieport 0000:00:03.1: AER: enabled with IRQ 28"));
    EXPECT_FALSE(parse_aer("x: PCIe Bus Error: severity=Weird"));
}

TEST(XidCatalog, DcgmFatalSetIsFatal) {
    for (int code : {48, 74, 79, 95, 119, 120, 140, 64}) {
        ASSERT_NE(find_xid(code), nullptr) << code;
        EXPECT_EQ(find_xid(code)->severity, XidSeverity::kFatal) << code;
    }
    for (int code : {13, 31, 43, 63, 94})
        EXPECT_EQ(find_xid(code)->severity, XidSeverity::kWarn) << code;
    EXPECT_EQ(find_xid(12345), nullptr);
}

}  // namespace
}  // namespace trainrig

// kmsg.xid, kmsg.pcie-aer, nccl.env and storage.data-dir on in-memory snapshots.
#include <gtest/gtest.h>

#include "rule_test_util.h"
#include "snapshot_builder.h"

namespace trainrig::test {
namespace {

void add_log(Snapshot& s, uint64_t seq, const std::string& m, uint64_t usec = 5000000) {
    s.kernel_log.value().records.push_back(kmsg(seq, m, usec));
}

TEST(Xid, CleanLogPasses) { EXPECT_STATUS(judge_one("kmsg.xid", healthy()), kPass); }

TEST(Xid, FatalXidFailsWithCatalogActionAndCounts) {
    auto s = healthy();
    add_log(s, 900,
            "NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has fallen off the bus.");
    add_log(s, 901, "NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.");
    add_log(s, 902, "NVRM: Xid (PCI:0000:01:00): 13, pid=7, name=train, Graphics Exception",
            6000000);
    add_log(s, 903, "NVRM: Xid (PCI:0000:01:00): 13, pid=7, name=train, Graphics Exception",
            7000000);
    auto f = judge_one("kmsg.xid", s);
    EXPECT_STATUS(f, kFail);
    EXPECT_NE(f.summary.find("3 Xid event(s), 1 fatal"), std::string::npos) << f.summary;
    EXPECT_NE(f.remedy.find("power-cycle"), std::string::npos);
    ASSERT_EQ(f.data["xids"].size(), 2u);
    EXPECT_EQ(f.data["xids"][0]["code"], 13);
    EXPECT_EQ(f.data["xids"][0]["count"], 2);
    EXPECT_EQ(f.data["xids"][1]["severity"], "fatal");
}

TEST(Xid, NonFatalAndUnknownCodesWarn) {
    auto s = healthy();
    add_log(s, 900, "NVRM: Xid (PCI:0000:41:00): 94, pid=1, name=x, Contained: SM (0x1).");
    add_log(s, 901, "NVRM: Xid (0000:41:00): 999, something new");  // older format, unknown code
    auto f = judge_one("kmsg.xid", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_TRUE(any_contains(f.evidence, "Xid 999"));
}

TEST(Xid, FallenOffTheBusWithoutXidIsFatal) {
    auto s = healthy();
    add_log(s, 900, "NVRM: GPU 0000:81:00.0: GPU has fallen off the bus.");
    EXPECT_STATUS(judge_one("kmsg.xid", s), kFail);
}

TEST(Xid, UnreadableLogSkipsOnPermissionErrorsOtherwise) {
    auto s = healthy();
    s.kernel_log = Fact<KernelLog>::failed(
        {Errc::kPermission, "cannot read /dev/kmsg: Operation not permitted", "run as root"});
    auto f = judge_one("kmsg.xid", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_EQ(f.remedy, "run as root");
    s.kernel_log =
        Fact<KernelLog>::failed({Errc::kIo, "cannot read /dev/kmsg: Input/output error"});
    EXPECT_STATUS(judge_one("kmsg.xid", s), kError);
    EXPECT_STATUS(judge_one("kmsg.pcie-aer", s), kError);
}

TEST(Xid, CpuOnlyHostSkips) {
    auto s = healthy();
    s.pci_devices = Fact<std::vector<PciDevice>>::known({});
    s.nvidia = {};
    EXPECT_STATUS(judge_one("kmsg.xid", s), kSkip);
}

TEST(Aer, SeverityDecidesStatus) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kmsg.pcie-aer", s), kPass);
    add_log(s, 900, "pcieport 0000:40:01.1: AER: Corrected error received: 0000:41:00.0");
    add_log(s, 901,
            "nvidia 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
            "(Receiver ID)");
    auto f = judge_one("kmsg.pcie-aer", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_EQ(f.data["aer"][0]["device"], "0000:41:00.0");
    add_log(s, 902,
            "pcieport 0000:80:01.1: AER: PCIe Bus Error: severity=Uncorrected (Fatal), "
            "type=Transaction Layer, (Requester ID)");
    EXPECT_STATUS(judge_one("kmsg.pcie-aer", s), kFail);
}

Snapshot with_env(std::map<std::string, std::string> vars) {
    auto s = healthy();
    s.environment = Fact<Environment>::known({"/proc/self/environ", std::move(vars)});
    return s;
}

TEST(NcclEnv, ArticleVariables) {
    EXPECT_STATUS(judge_one("nccl.env", healthy()), kPass);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_DEBUG", "WARN"}})), kPass);
    auto f = judge_one("nccl.env", with_env({{"NCCL_P2P_DISABLE", "1"},
                                             {"NCCL_SHM_DISABLE", "1"},
                                             {"NCCL_SOCKET_TIMEOUT", "1800"},
                                             {"NCCL_ASYNC_ERROR_HANDLING", "1"},
                                             {"NCCL_IB_DISABLE", "1"}}));
    EXPECT_STATUS(f, kFail);
    EXPECT_TRUE(any_contains(f.evidence, "NCCL_P2P_DISABLE=1"));
    EXPECT_TRUE(any_contains(f.evidence, "NCCL_SHM_DISABLE=1"));
    EXPECT_TRUE(any_contains(f.evidence, "NCCL_SOCKET_TIMEOUT=1800"));
    EXPECT_TRUE(any_contains(f.evidence, "TORCH_NCCL_ASYNC_ERROR_HANDLING"));
    EXPECT_FALSE(any_contains(f.evidence, "NCCL_IB_DISABLE")) << "no InfiniBand on this machine";
}

TEST(NcclEnv, IbDisableWarnsWithInfiniband) {
    auto s = with_env({{"NCCL_IB_DISABLE", "1"}});
    s.infiniband = Fact<std::vector<std::string>>::known({"mlx5_0"});
    EXPECT_STATUS(judge_one("nccl.env", s), kWarn);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_P2P_DISABLE", "0"}})), kPass);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_P2P_LEVEL", "LOC"}})), kFail);
    // NCCL parses these as integers and acts on exactly 1: "true" is 0, "2" does nothing.
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_P2P_DISABLE", "true"}})), kPass);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_P2P_DISABLE", "2"}})), kPass);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_P2P_DISABLE", " 0x1"}})), kFail);
    EXPECT_STATUS(judge_one("nccl.env", with_env({{"NCCL_SHM_DISABLE", "0x1"}})), kWarn);
    auto ib = with_env({{"NCCL_IB_DISABLE", "2"}});
    ib.infiniband = Fact<std::vector<std::string>>::known({"mlx5_0"});
    EXPECT_STATUS(judge_one("nccl.env", ib), kWarn);
}

TEST(NcclEnv, UnreadableEnvironmentIsError) {
    auto s = healthy();
    s.environment = garbled<Environment>("cannot read /proc/self/environ: Permission denied");
    EXPECT_STATUS(judge_one("nccl.env", s), kError);
}

Snapshot with_data(const std::string& kind, const std::string& fs = "ext4") {
    auto s = healthy();
    DataDir d;
    d.path = "/data";
    d.mount_point = "/data";
    d.fs_type = fs;
    d.mount_source = "/dev/x1";
    d.dev = "259:1";
    if (!kind.empty()) d.devices.push_back({"x", kind, Fact<int64_t>::known(kind == "hdd")});
    d.free_bytes = Fact<uint64_t>::known(500ull << 30);
    d.total_bytes = Fact<uint64_t>::known(1000ull << 30);
    s.data_dir = Fact<DataDir>::known(d);
    return s;
}

TEST(DataDir, DiskKinds) {
    EXPECT_STATUS(judge_one("storage.data-dir", healthy()), kSkip);
    EXPECT_STATUS(judge_one("storage.data-dir", with_data("nvme")), kPass);
    EXPECT_STATUS(judge_one("storage.data-dir", with_data("ssd")), kWarn);
    EXPECT_STATUS(judge_one("storage.data-dir", with_data("hdd")), kWarn);
    EXPECT_STATUS(judge_one("storage.data-dir", with_data("", "nfs4")), kPass);
    EXPECT_STATUS(judge_one("storage.data-dir", with_data("", "tmpfs")), kWarn);
}

TEST(DataDir, LowFreeSpaceWarnsMissingFolderErrors) {
    auto s = with_data("nvme");
    s.data_dir.value().free_bytes = Fact<uint64_t>::known(10ull << 30);
    EXPECT_STATUS(judge_one("storage.data-dir", s), kWarn);
    s.data_dir = Fact<DataDir>::failed(
        {Errc::kNotFound, "cannot use --data-dir /nope: No such file or directory"});
    EXPECT_STATUS(judge_one("storage.data-dir", s), kError);
}

}  // namespace
}  // namespace trainrig::test

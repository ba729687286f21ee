// numa.gpu-affinity, kernel.*, cpu.governor, mem.*, iommu.mode, driver.nvidia on in-memory
// snapshots: pass, the problem, and missing or garbled input for each.
#include <gtest/gtest.h>

#include "rule_test_util.h"
#include "snapshot_builder.h"

namespace trainrig::test {
namespace {

TEST(NumaAffinity, TableOfGpuNodeCpus) {
    auto f = judge_one("numa.gpu-affinity", healthy());
    EXPECT_STATUS(f, kPass);
    ASSERT_EQ(f.data["gpus"].size(), 4u);
    EXPECT_EQ(f.data["gpus"][2]["numa_node"], 1);
    EXPECT_EQ(f.data["gpus"][2]["cpus"], "16-31");
}

TEST(NumaAffinity, UnknownNodeWarnsOnlyOnMultiSocket) {
    auto s = healthy();
    gpu_at(s, 0).numa_node = Fact<int64_t>::known(-1);
    EXPECT_STATUS(judge_one("numa.gpu-affinity", s), kWarn);
    s.topology.value().packages = 1;
    s.topology.value().numa_nodes.resize(1);
    EXPECT_STATUS(judge_one("numa.gpu-affinity", s), kPass);
}

TEST(NumaAffinity, GarbledNodeOrTopologyIsError) {
    auto s = healthy();
    gpu_at(s, 0).numa_node = garbled<int64_t>();
    EXPECT_STATUS(judge_one("numa.gpu-affinity", s), kError);
    auto t = healthy();
    t.topology = garbled<Topology>("hwloc could not read the topology");
    EXPECT_STATUS(judge_one("numa.gpu-affinity", t), kError);
}

TEST(NumaAffinity, SnapshotWithoutTopologyIsAnError) {
    auto s = healthy();
    s.topology = Fact<Topology>::absent();
    EXPECT_STATUS(judge_one("numa.gpu-affinity", s), kError);
    s.kernel.numa_balancing = Fact<int64_t>::known(1);
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kError);
}

TEST(Swappiness, Thresholds) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kernel.swappiness", s), kPass);
    s.kernel.swappiness = Fact<int64_t>::known(10);
    EXPECT_STATUS(judge_one("kernel.swappiness", s), kPass);
    s.kernel.swappiness = Fact<int64_t>::known(60);
    EXPECT_STATUS(judge_one("kernel.swappiness", s), kWarn);
    s.kernel.swappiness = garbled<int64_t>();
    EXPECT_STATUS(judge_one("kernel.swappiness", s), kError);
    s.kernel.swappiness = Fact<int64_t>::absent();
    EXPECT_STATUS(judge_one("kernel.swappiness", s), kSkip);
}

TEST(NumaBalancing, WarnsOnlyWhenOnWithSeveralNodes) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kPass);
    s.kernel.numa_balancing = Fact<int64_t>::known(1);
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kWarn);
    s.topology.value().packages = 1;
    s.topology.value().numa_nodes.resize(1);
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kPass);
    s.kernel.numa_balancing = Fact<int64_t>::absent();
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kSkip);
    s.kernel.numa_balancing = garbled<int64_t>();
    EXPECT_STATUS(judge_one("kernel.numa-balancing", s), kError);
}

TEST(Thp, DefragAlwaysWarns) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kernel.thp", s), kPass);
    s.kernel.thp_defrag = Fact<std::string>::known("always");
    EXPECT_STATUS(judge_one("kernel.thp", s), kWarn);
    s.kernel.thp_enabled = Fact<std::string>::absent();
    EXPECT_STATUS(judge_one("kernel.thp", s), kSkip);
    s.kernel.thp_enabled = garbled<std::string>("expected one [selected] choice");
    EXPECT_STATUS(judge_one("kernel.thp", s), kError);
}

TEST(Nofile, SoftLimitAndFileMax) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kernel.nofile", s), kPass);
    s.nofile = Fact<Rlimit>::known({1024, 524288});
    auto f = judge_one("kernel.nofile", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.remedy.find("ulimit -n"), std::string::npos);
    auto t = healthy();
    t.kernel.file_max = Fact<int64_t>::known(65536);
    EXPECT_STATUS(judge_one("kernel.nofile", t), kWarn);
    t.nofile = garbled<Rlimit>("no 'Max open files' row");
    EXPECT_STATUS(judge_one("kernel.nofile", t), kError);
    auto u = healthy();
    u.nofile = Fact<Rlimit>::known({Rlimit::kUnlimited, Rlimit::kUnlimited});
    EXPECT_STATUS(judge_one("kernel.nofile", u), kPass);
}

// A tree without /proc/self/limits has not shown the limit jobs run out of: not a pass.
TEST(Nofile, WithoutProcessLimitsTheLimitIsNotJudged) {
    auto s = healthy();
    s.nofile = Fact<Rlimit>::absent();
    auto f = judge_one("kernel.nofile", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("/proc/self/limits absent"), std::string::npos) << f.summary;
    EXPECT_NE(f.summary.find("fs.file-max is"), std::string::npos) << f.summary;
    // fs.file-max is still judged.
    s.kernel.file_max = Fact<int64_t>::known(65536);
    EXPECT_STATUS(judge_one("kernel.nofile", s), kWarn);
}

TEST(SysctlObsolete, NamesFileLineAndFate) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("kernel.sysctl-obsolete", s), kPass);
    s.sysctl.settings.push_back(
        {"/etc/sysctl.conf", 12, "kernel.sched_latency_ns", "20000000", false, false});
    s.sysctl.settings.push_back(
        {"/etc/sysctl.d/10-x.conf", 2, "kernel.sched_foo", "1", true, false});
    auto f = judge_one("kernel.sysctl-obsolete", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_TRUE(any_contains(f.evidence, "/etc/sysctl.conf:12: kernel.sched_latency_ns"));
    EXPECT_TRUE(any_contains(f.evidence, "5.13"));
    EXPECT_FALSE(any_contains(f.evidence, "sched_foo")) << "optional '-' keys are not reported";
    EXPECT_EQ(f.data["missing"].size(), 1u);
}

TEST(SysctlObsolete, KeysOfUnloadedModulesAndAbsentInterfacesAreNotBlamedOnTheKernel) {
    auto s = healthy();
    s.sysctl.settings.push_back(
        {"/etc/sysctl.d/k8s.conf", 1, "net.bridge.bridge-nf-call-iptables", "1", false, false});
    s.sysctl.settings.push_back(
        {"/etc/sysctl.d/k8s.conf", 2, "net.ipv4.conf.eth7.rp_filter", "1", false, false});
    auto f = judge_one("kernel.sysctl-obsolete", s);
    EXPECT_STATUS(f, kPass);
    EXPECT_TRUE(any_contains(f.evidence, "br_netfilter"));
    EXPECT_TRUE(any_contains(f.evidence, "interface eth7"));
    s.sysctl.settings.push_back(
        {"/etc/sysctl.d/k8s.conf", 3, "net.ipv4.conf.all.foo", "1", false, false});
    EXPECT_STATUS(judge_one("kernel.sysctl-obsolete", s), kWarn);
}

TEST(SysctlObsolete, MalformedLinesWarnUnreadableFilesError) {
    auto s = healthy();
    s.sysctl.malformed.push_back({"/etc/sysctl.conf", 4, "this is not a setting"});
    EXPECT_STATUS(judge_one("kernel.sysctl-obsolete", s), kWarn);
    s.sysctl.unreadable.push_back("cannot read /etc/sysctl.d/x.conf: Permission denied");
    EXPECT_STATUS(judge_one("kernel.sysctl-obsolete", s), kError);
    auto t = healthy();
    t.sysctl.proc_sys_present = false;
    EXPECT_STATUS(judge_one("kernel.sysctl-obsolete", t), kSkip);
}

TEST(Governor, PerformanceOrWarn) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("cpu.governor", s), kPass);
    s.cpu_governors =
        Fact<std::map<std::string, int>>::known({{"performance", 60}, {"schedutil", 4}});
    auto f = judge_one("cpu.governor", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("4 of 64"), std::string::npos);
    s.cpu_governors = Fact<std::map<std::string, int>>::absent();
    EXPECT_STATUS(judge_one("cpu.governor", s), kSkip);
    s.cpu_governors = garbled<std::map<std::string, int>>();
    EXPECT_STATUS(judge_one("cpu.governor", s), kError);
}

TEST(Ecc, ControllersErrorsAndAbsence) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("mem.ecc", s), kPass);
    s.memory.edac.value()[0].ce_count = Fact<uint64_t>::known(3);
    EXPECT_STATUS(judge_one("mem.ecc", s), kWarn);
    s.memory.edac.value()[0].ue_count = Fact<uint64_t>::known(1);
    EXPECT_STATUS(judge_one("mem.ecc", s), kFail);
    s.memory.edac = Fact<std::vector<EdacController>>::known({});
    EXPECT_STATUS(judge_one("mem.ecc", s), kWarn);
    s.memory.edac = Fact<std::vector<EdacController>>::absent();
    EXPECT_STATUS(judge_one("mem.ecc", s), kWarn);
    s.memory.edac = garbled<std::vector<EdacController>>();
    EXPECT_STATUS(judge_one("mem.ecc", s), kError);
}

TEST(Ecc, AGuestWithoutControllersIsNotJudgedOneWithThemIs) {
    auto s = healthy();
    s.host.hypervisor = Fact<bool>::known(true);
    EXPECT_STATUS(judge_one("mem.ecc", s), kPass);  // a guest that sees controllers: judged
    s.memory.edac.value()[0].ue_count = Fact<uint64_t>::known(1);
    EXPECT_STATUS(judge_one("mem.ecc", s), kFail);
    s.memory.edac = Fact<std::vector<EdacController>>::absent();
    auto f = judge_one("mem.ecc", s);
    EXPECT_STATUS(f, kSkip);
    EXPECT_NE(f.summary.find("a virtual machine"), std::string::npos) << f.summary;
    s.host.hypervisor = Fact<bool>::known(false);  // bare metal without EDAC: cannot confirm
    EXPECT_STATUS(judge_one("mem.ecc", s), kWarn);
}

TEST(Shm, SizeFloorAndAbsence) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("mem.shm", s), kPass);
    s.memory.shm = Fact<ShmMount>::known({64ull << 20, "size=65536k"});
    auto f = judge_one("mem.shm", s);
    EXPECT_STATUS(f, kWarn);
    EXPECT_NE(f.summary.find("64.0 MiB"), std::string::npos) << f.summary;
    s.memory.shm = Fact<ShmMount>::absent();
    EXPECT_STATUS(judge_one("mem.shm", s), kFail);
    s.memory.shm = garbled<ShmMount>();
    EXPECT_STATUS(judge_one("mem.shm", s), kError);
}

TEST(Iommu, PassthroughTranslatedAndOff) {
    auto s = healthy();
    EXPECT_STATUS(judge_one("iommu.mode", s), kPass);
    gpu_at(s, 0).iommu_group_type = Fact<std::string>::known("DMA-FQ");
    EXPECT_STATUS(judge_one("iommu.mode", s), kWarn);
    s.iommu_units = Fact<std::vector<std::string>>::absent();
    EXPECT_STATUS(judge_one("iommu.mode", s), kPass);
    auto t = healthy();
    for (auto& g : t.pci_devices.value()) g.iommu_group_type = Fact<std::string>::absent();
    EXPECT_STATUS(judge_one("iommu.mode", t), kPass) << "iommu=pt on the command line";
    t.host.cmdline = Fact<std::string>::known("ro quiet");
    EXPECT_STATUS(judge_one("iommu.mode", t), kWarn);
    t.iommu_units = garbled<std::vector<std::string>>();
    EXPECT_STATUS(judge_one("iommu.mode", t), kError);
    auto cpu_only = healthy();
    cpu_only.pci_devices = Fact<std::vector<PciDevice>>::known({});
    cpu_only.host.cmdline = Fact<std::string>::known("ro quiet");
    EXPECT_STATUS(judge_one("iommu.mode", cpu_only), kSkip);
}

TEST(Driver, LoadedMissingNouveauAndCpuOnly) {
    auto s = healthy();
    auto f = judge_one("driver.nvidia", s);
    EXPECT_STATUS(f, kPass);
    EXPECT_NE(f.summary.find("535.183.01"), std::string::npos);
    s.nvidia.loaded = false;
    EXPECT_STATUS(judge_one("driver.nvidia", s), kFail);
    auto t = healthy();
    gpu_at(t, 0).driver = Fact<std::string>::known("nouveau");
    EXPECT_STATUS(judge_one("driver.nvidia", t), kFail);
    auto u = healthy();
    u.nvidia.version = garbled<std::string>("no driver version number");
    EXPECT_STATUS(judge_one("driver.nvidia", u), kError);
    auto v = healthy();
    v.pci_devices = Fact<std::vector<PciDevice>>::known({});
    EXPECT_STATUS(judge_one("driver.nvidia", v), kSkip);
}

}  // namespace
}  // namespace trainrig::test

// The tuning profiles on in-memory snapshots: each setting appears when the machine needs it,
// keeps out what the kernel lacks, and user overrides are checked.
#include <gtest/gtest.h>

#include "launch/binding.h"
#include "snapshot_builder.h"
#include "tune/profile.h"
#include "tune/render_tune.h"

namespace trainrig::tune {
namespace {

LiveState live_of(std::map<std::string, std::string> sysctl) {
    LiveState l;
    l.proc_sys = true;
    l.sysctl = std::move(sysctl);
    return l;
}

const Setting* find(const Profile& p, const std::string& key) {
    for (const auto& x : p.settings)
        if (x.key == key) return &x;
    return nullptr;
}

Profile build(const Snapshot& s, const LiveState& live, TuneRequest r = {}) {
    auto p = build_profile(s, live, r);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? *p : Profile{};
}

const LiveState kStock = live_of({{"vm.swappiness", "60"},
                                  {"kernel.numa_balancing", "1"},
                                  {"fs.file-max", "9223372036854775807"}});

TEST(TuneSysctl, SwappinessAndNumaBalancingOnATwoNodeMachine) {
    const auto p = build(test::healthy(), kStock);
    ASSERT_NE(find(p, "vm.swappiness"), nullptr);
    EXPECT_EQ(find(p, "vm.swappiness")->value, "10");
    EXPECT_EQ(find(p, "vm.swappiness")->live, "60");
    EXPECT_TRUE(find(p, "vm.swappiness")->changes());
    ASSERT_NE(find(p, "kernel.numa_balancing"), nullptr);
    EXPECT_EQ(find(p, "kernel.numa_balancing")->value, "0");
    EXPECT_EQ(find(p, "fs.file-max"), nullptr);  // never lowered
}

TEST(TuneSysctl, KeysTheKernelLacksAreLeftOutAndSaidSo) {
    auto s = test::healthy();
    s.topology.value().numa_nodes.resize(1);
    s.topology.value().packages = 1;
    const auto p = build(s, live_of({{"vm.swappiness", "60"}}));
    EXPECT_EQ(find(p, "kernel.numa_balancing"), nullptr);
    bool noted = false;
    for (const auto& n : p.notes) noted |= n.find("kernel.numa_balancing") != std::string::npos;
    EXPECT_TRUE(noted);
    const auto q = build(test::healthy(), live_of({{"vm.swappiness", "60"}}));
    noted = false;
    for (const auto& n : q.notes) noted |= n.find("no such key") != std::string::npos;
    EXPECT_TRUE(noted);
    EXPECT_EQ(find(q, "kernel.numa_balancing"), nullptr);
}

TEST(TuneSysctl, SwappinessIsOnlyEverLowered) {
    // doctor passes up to 10 and its remedy writes 1: tune must not raise it back.
    const auto p = build(test::healthy(), live_of({{"vm.swappiness", "1"}}));
    EXPECT_EQ(find(p, "vm.swappiness")->value, "1");
    EXPECT_FALSE(find(p, "vm.swappiness")->changes());
}

TEST(TuneSysctl, UnreadableProcSysIsUnknownNotAbsent) {
    auto s = test::healthy();
    s.topology = Fact<Topology>::absent();
    s.cpu_governors = Fact<std::map<std::string, int>>::absent();
    LiveState nothing;
    const auto p = build(s, nothing);
    for (const auto& x : p.settings) EXPECT_NE(x.profile, "sysctl");
    std::string all;
    for (const auto& n : p.notes) all += n + "\n";
    EXPECT_NE(all.find("/proc/sys is not readable"), std::string::npos) << all;
    EXPECT_NE(all.find("cpufreq policies could not be read"), std::string::npos) << all;
    EXPECT_NE(all.find("topology could not be read"), std::string::npos) << all;
    EXPECT_EQ(all.find("no such key"), std::string::npos) << all;
}

TEST(TuneSysctl, FileContentListsEveryKeyWithItsReason) {
    const auto p = build(test::healthy(), kStock);
    ASSERT_FALSE(p.files.empty());
    EXPECT_EQ(p.files[0].path, kSysctlFile);
    EXPECT_NE(p.files[0].proposed.find("\nvm.swappiness = 10\n"), std::string::npos);
    EXPECT_NE(p.files[0].proposed.find("# above 10 the kernel swaps"), std::string::npos);
}

TEST(TuneOverrides, ReplaceAddAndRefuse) {
    auto parsed = parse_overrides(
        "[sysctl]\n\"vm.swappiness\" = 1\n\"net.core.rmem_max\" = 134217728\n"
        "[nccl]\nNCCL_SOCKET_IFNAME = \"ens1f0\"\n",
        "site.toml");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    TuneRequest r;
    r.overrides = *parsed;
    r.overrides_file = "site.toml";
    auto live = kStock;
    live.sysctl["net.core.rmem_max"] = "212992";
    const auto p = build(test::healthy(), live, r);
    EXPECT_EQ(find(p, "vm.swappiness")->value, "1");
    EXPECT_TRUE(find(p, "vm.swappiness")->from_override);
    EXPECT_EQ(find(p, "net.core.rmem_max")->live, "212992");
    EXPECT_EQ(find(p, "NCCL_SOCKET_IFNAME")->value, "ens1f0");

    auto refuse = [&](const char* text) {
        auto o = parse_overrides(text, "site.toml");
        if (!o.ok()) return o.status().message();
        TuneRequest q;
        q.overrides = *o;
        q.overrides_file = "site.toml";
        auto pr = build_profile(test::healthy(), kStock, q);
        EXPECT_FALSE(pr.ok());
        return pr.status().message();
    };
    EXPECT_EQ(refuse("[sysctl]\n\"kernel.sched_latency_ns\" = 1000000\n"),
              "site.toml: [sysctl] \"kernel.sched_latency_ns\" is not a key of this kernel (no "
              "/proc/sys entry); tune writes only keys the kernel has");
    EXPECT_EQ(refuse("[nccl]\nNCCL_P2P_DISABLE = 1\n"),
              "site.toml: [nccl] NCCL_P2P_DISABLE=1 is refused: turns off direct GPU-to-GPU "
              "transfers, NVLink included");
    EXPECT_EQ(refuse("[nccl]\nHOME = \"/x\"\n"),
              "site.toml: [nccl] \"HOME\" is not an NCCL_, TORCH_NCCL_ or TORCH_DISTRIBUTED_ "
              "variable");
    EXPECT_EQ(refuse("[limits]\nnofile = \"lots\"\n"),
              "site.toml: [limits] nofile = \"lots\" is not a number or \"unlimited\"");
    EXPECT_EQ(refuse("[gpu]\nx = 1\n"),
              "site.toml line 1: \"gpu\" is not a profile table (sysctl, limits, nccl, cpu, numa)");
    EXPECT_EQ(refuse("[cpu]\ngovernor = 1.5\n"),
              "site.toml line 2: [cpu] \"governor\" must be a string or an integer");
    EXPECT_EQ(refuse("[sysctl]\nvm.swappiness = 5\n"),
              "site.toml line 2: [sysctl] \"vm\" is a table; quote dotted keys "
              "(\"vm.swappiness\" = 10)");
    EXPECT_EQ(refuse("[nccl]\n\"NCCL_DEBUG\\nrm -rf ~\" = \"INFO\"\n"),
              "site.toml line 2: [nccl] \"NCCL_DEBUG\nrm -rf ~\" is not a setting name (letters, "
              "digits, _ . / -)");
    // Values the kernel would refuse are refused before anything is written: tune apply would
    // otherwise write them, and sysctl --system would fail at every boot.
    EXPECT_EQ(refuse("[sysctl]\n\"vm.swappiness\" = \"abc\"\n"),
              "site.toml: [sysctl] vm.swappiness = \"abc\" is not an integer from 0 to 200; the "
              "kernel would refuse it");
    EXPECT_NE(refuse("[sysctl]\n\"vm.swappiness\" = -1\n").find("from 0 to 200"),
              std::string::npos);
    EXPECT_NE(refuse("[sysctl]\n\"vm.swappiness\" = 201\n").find("from 0 to 200"),
              std::string::npos);
    EXPECT_NE(refuse("[sysctl]\n\"kernel.numa_balancing\" = 7\n").find("from 0 to 3"),
              std::string::npos);
    EXPECT_NE(refuse("[sysctl]\n\"fs.file-max\" = -5\n").find("at least 0"), std::string::npos);
    EXPECT_EQ(refuse("[cpu]\ngovernor = \"turbo\"\n"),
              "site.toml: [cpu] governor = \"turbo\" is not one this machine offers "
              "(conservative, ondemand, performance, powersave, schedutil, userspace); the kernel "
              "would refuse it");
    {  // the shape of a key tune does not know: as many integers as it holds
        auto o = parse_overrides("[sysctl]\n\"net.ipv4.tcp_rmem\" = \"4096 131072\"\n", "s.toml");
        ASSERT_TRUE(o.ok());
        TuneRequest q;
        q.overrides = *o;
        q.overrides_file = "s.toml";
        auto tcp = kStock;
        tcp.sysctl["net.ipv4.tcp_rmem"] = "4096\t131072\t6291456";
        auto pr = build_profile(test::healthy(), tcp, q);
        ASSERT_FALSE(pr.ok());
        EXPECT_NE(pr.status().message().find("is not 3 integers"), std::string::npos)
            << pr.status().message();
        q.overrides["sysctl"]["net.ipv4.tcp_rmem"] = "4096 131072 16777216";
        EXPECT_TRUE(build_profile(test::healthy(), tcp, q).ok());
        // A machine's own list of governors is the one judged by.
        auto gov = parse_overrides("[cpu]\ngovernor = \"ondemand\"\n", "s.toml");
        q.overrides = *gov;
        tcp.governors = {"performance", "powersave"};
        auto pg = build_profile(test::healthy(), tcp, q);
        ASSERT_FALSE(pg.ok());
        EXPECT_NE(pg.status().message().find("(performance, powersave)"), std::string::npos);
    }
    EXPECT_EQ(refuse("[limits]\nnofile = \"unlimited\"\n"),
              "site.toml: [limits] nofile = unlimited is above fs.nr_open (finite): logins "
              "would fail to set it");
    // Overrides of profiles --only leaves out are still checked.
    auto bad = parse_overrides("[nccl]\nNCCL_P2P_DISABLE = 1\n", "site.toml");
    TuneRequest only_sysctl;
    only_sysctl.overrides = *bad;
    only_sysctl.only = {"sysctl"};
    EXPECT_FALSE(build_profile(test::healthy(), kStock, only_sysctl).ok());
    // An empty file changes nothing.
    auto empty = parse_overrides("", "site.toml");
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->empty());
}

TEST(TuneNccl, HarmfulVariablesRemovedAndRenamedOnesRenamed) {
    auto s = test::healthy();
    s.environment.value().vars = {
        {"NCCL_P2P_DISABLE", "1"}, {"NCCL_ASYNC_ERROR_HANDLING", "1"}, {"NCCL_DEBUG", "INFO"}};
    const auto p = build(s, kStock);
    EXPECT_EQ(find(p, "NCCL_P2P_DISABLE")->value, "(unset)");
    EXPECT_EQ(find(p, "NCCL_ASYNC_ERROR_HANDLING")->value, "(unset)");
    EXPECT_EQ(find(p, "TORCH_NCCL_ASYNC_ERROR_HANDLING")->value, "1");
    EXPECT_EQ(find(p, "NCCL_DEBUG"), nullptr);  // harmless: left alone
    const auto& file = p.files[2].proposed;
    EXPECT_NE(file.find("\nunset NCCL_P2P_DISABLE\n"), std::string::npos);
    EXPECT_NE(file.find("\nTORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"), std::string::npos);

    // Both names set: PyTorch uses the new one; only the old one goes.
    auto both = s;
    both.environment.value().vars["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "3";
    const auto b = build(both, kStock);
    EXPECT_EQ(find(b, "NCCL_ASYNC_ERROR_HANDLING")->value, "(unset)");
    EXPECT_EQ(find(b, "TORCH_NCCL_ASYNC_ERROR_HANDLING"), nullptr);

    // A value from the environment with shell characters is quoted, never run.
    auto hostile = s;
    hostile.environment.value().vars = {{"NCCL_ASYNC_ERROR_HANDLING", "1; touch /tmp/x"}};
    const auto h = build(hostile, kStock);
    EXPECT_NE(h.files[2].proposed.find("\nTORCH_NCCL_ASYNC_ERROR_HANDLING='1; touch /tmp/x'\n"),
              std::string::npos)
        << h.files[2].proposed;

    // PyTorch 2.1 reads only the old name: kept.
    SoftwareStack stack;
    TorchFacts torch;
    torch.version = "2.1.2+cu121";
    stack.torch = Fact<TorchFacts>::known(torch);
    s.stack = Fact<SoftwareStack>::known(stack);
    const auto old = build(s, kStock);
    EXPECT_EQ(find(old, "NCCL_ASYNC_ERROR_HANDLING"), nullptr);
}

TEST(TuneNccl, SocketInterfaceOnlyForMultiNodeWithoutInfiniband) {
    auto live = kStock;
    live.default_route_interface = "ens3f0";
    TuneRequest r;
    EXPECT_EQ(find(build(test::healthy(), live, r), "NCCL_SOCKET_IFNAME"), nullptr);
    r.multi_node = true;
    EXPECT_EQ(find(build(test::healthy(), live, r), "NCCL_SOCKET_IFNAME")->value, "ens3f0");
    auto ib = test::healthy();
    ib.infiniband = Fact<std::vector<std::string>>::known({"mlx5_0"});
    EXPECT_EQ(find(build(ib, live, r), "NCCL_SOCKET_IFNAME"), nullptr);
}

TEST(TuneLimits, MemlockOnlyWithRdma) {
    EXPECT_EQ(find(build(test::healthy(), kStock), "* soft memlock"), nullptr);
    auto ib = test::healthy();
    ib.infiniband = Fact<std::vector<std::string>>::known({"mlx5_0"});
    auto live = kStock;
    live.memlock = Rlimit{8388608, 8388608};  // bytes in /proc; KiB in limits.conf
    const auto p = build(ib, live);
    ASSERT_NE(find(p, "* hard memlock"), nullptr);
    EXPECT_EQ(find(p, "* hard memlock")->live, "8192");
    EXPECT_EQ(find(p, "* soft nofile")->live, "1048576");
    EXPECT_FALSE(find(p, "* soft nofile")->changes());
    // Never lowered: a machine with more keeps it.
    auto big = test::healthy();
    big.nofile = Fact<Rlimit>::known({4194304, 4194304});
    EXPECT_EQ(find(build(big, kStock), "* hard nofile")->value, "4194304");
}

TEST(TuneCpuNuma, GovernorAndPerGpuBinding) {
    auto s = test::healthy();
    s.cpu_governors =
        Fact<std::map<std::string, int>>::known({{"powersave", 48}, {"performance", 16}});
    const auto p = build(s, kStock);
    EXPECT_EQ(find(p, "scaling_governor")->live,
              "performance on 16 policies, powersave on 48 policies");
    EXPECT_TRUE(find(p, "scaling_governor")->changes());
    size_t gpus = 0;
    for (const auto& x : p.settings) gpus += x.profile == "numa";
    EXPECT_EQ(gpus, 4u);  // the healthy machine's four GPUs, two per node
    EXPECT_EQ(find(p, "GPU 0000:81:00.0")->value, "node 1, CPUs 16-31");
    EXPECT_FALSE(find(p, "GPU 0000:81:00.0")->live.has_value());
}

TEST(TuneCpuNuma, TheBoardsVgaIsNoGpu) {
    // A server's BMC shows a VGA controller (ASPEED, class 0x0300) on the bus: neither doctor,
    // launch nor tune counts it among the GPUs, so rank 0 keeps GPU 0's node.
    auto s = test::healthy();
    PciDevice bmc = test::gpu("0000:02:00.0", 0x2000, 0);
    bmc.vendor = Fact<uint64_t>::known(0x1a03);
    bmc.class_code = Fact<uint64_t>::known(0x030000);
    bmc.driver = Fact<std::string>::known("ast");
    auto& devices = s.pci_devices.value();
    devices.insert(devices.begin(), bmc);
    const auto p = build(s, kStock);
    EXPECT_EQ(find(p, "GPU 0000:02:00.0"), nullptr);
    const auto places = launch::gpu_places(s);
    ASSERT_EQ(places.size(), 4u);
    EXPECT_EQ(places[0].address, "0000:01:00.0");
}

TEST(TuneProfile, OnlySelectsProfilesAndRejectsUnknownNames) {
    TuneRequest r;
    r.only = {"cpu"};
    const auto p = build(test::healthy(), kStock, r);
    for (const auto& x : p.settings) EXPECT_EQ(x.profile, "cpu");
    EXPECT_TRUE(p.files.empty());
    r.only = {"sysctl", "kernel"};
    EXPECT_EQ(build_profile(test::healthy(), kStock, r).status().message(),
              "--only: \"kernel\" is not a profile (sysctl, limits, nccl, cpu, numa)");
}

TEST(TuneNccl, DefaultRouteIsTheUpRouteWithZeroMask) {
    const char* table =
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
        "docker0\t00000000\t00000000\t0000\t0\t0\t0\t00000000\t0\t0\t0\n"
        "ens3f0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
        "ens3f0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";
    EXPECT_EQ(parse_default_route(table), "ens3f0");  // docker0's row is down
    EXPECT_FALSE(parse_default_route("Iface\tDestination\n"));
}

TEST(TuneDiff, LineDiffAndNoDifferences) {
    EXPECT_EQ(line_diff("a\nb\nc\n", "a\nx\nc\n"), " a\n-b\n+x\n c\n");
    EXPECT_EQ(line_diff("", "a\n"), "+a\n");
    EXPECT_EQ(line_diff("a", "a\n"), "-a\n\\ No newline at end of file\n+a\n");
    Profile same;
    same.files.push_back({"sysctl", kSysctlFile, "x\n", std::string("x\n")});
    EXPECT_EQ(change_count(same), 0u);
    EXPECT_EQ(render_diff(same), "No differences: this machine has the profile.\n");
}

}  // namespace
}  // namespace trainrig::tune

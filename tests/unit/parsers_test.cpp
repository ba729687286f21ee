// The kernel text-format parsers, on real-format samples and on garbage.
#include "probe/parsers.h"

#include <gtest/gtest.h>

namespace trainrig {
namespace {

TEST(Kmsg, ParsesPrefixAndDropsContinuationLines) {
    auto r = parse_kmsg_record(
        "4,1234,5678901,-;nvidia 0000:41:00.0: AER: something\n SUBSYSTEM=pci\n "
        "DEVICE=+pci:0000:41:00.0\n");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->priority, 4);
    EXPECT_EQ(r->seq, 1234u);
    EXPECT_EQ(r->usec, 5678901u);
    EXPECT_EQ(r->message, "nvidia 0000:41:00.0: AER: something");
}

TEST(Kmsg, FacilityIsStrippedAndExtraPrefixFieldsAllowed) {
    auto r = parse_kmsg_record("14,7,100,c,caller=T1;hello");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->priority, 6);
    EXPECT_EQ(r->message, "hello");
}

TEST(Kmsg, DecodesEscapesAndJoinsEmbeddedLines) {
    auto r = parse_kmsg_record(
        "3,812,4470391,-;NVRM: This PCI I/O region assigned to your NVIDIA device is "
        "invalid:\\x0aNVRM: BAR1 is 0M @ 0x0 (PCI:0000:c1:00.0)\\x5c");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->message,
              "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid: NVRM: BAR1 is "
              "0M @ 0x0 (PCI:0000:c1:00.0)\\");
    EXPECT_EQ(parse_kmsg_record("6,1,1,-;a\\xZZ \\x")->message, "a\\xZZ \\x");
}

TEST(Kmsg, RejectsMalformed) {
    EXPECT_FALSE(parse_kmsg_record("no prefix at all").ok());
    EXPECT_FALSE(parse_kmsg_record("6,x,100,-;msg").ok());
    EXPECT_FALSE(parse_kmsg_record("6,1;msg").ok());
    EXPECT_EQ(parse_kmsg_record("6,1,2").status().code(), Errc::kInvalidInput);
}

TEST(Kmsg, BufferSplitsRecordsAndCountsMalformed) {
    std::vector<KmsgRecord> got;
    auto bad = for_each_kmsg_record(
        "6,1,10,-;first\n SUBSYSTEM=pci\n6,2,20,-;second\ngarbage\n\n6,3,30,-;third",
        [&](KmsgRecord r) { got.push_back(r); });
    EXPECT_EQ(bad, 1u);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[2].message, "third");
}

TEST(Kmsg, InvalidUtf8AndControlBytesAreMadeSafe) {
    auto r = parse_kmsg_record(std::string("6,1,1,-;a\xff\x1b[2Jb", 15));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->message, "a\xEF\xBF\xBD?[2Jb");
}

TEST(PciResource, RealFormat) {
    auto r = parse_pci_resource(
        "0x00000000f1000000 0x00000000f1ffffff 0x0000000000040200\n"
        "0x0000038000000000 0x00000397ffffffff 0x000000000014220c\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[1].end - (*r)[1].start + 1, 96ull << 30);
    EXPECT_EQ((*r)[2].flags, 0u);
}

TEST(PciResource, Garbage) {
    EXPECT_FALSE(parse_pci_resource("").ok());
    EXPECT_FALSE(parse_pci_resource("0x0 0x1").ok());
    EXPECT_FALSE(parse_pci_resource("0x0 0x1 zz").ok());
    EXPECT_FALSE(parse_pci_resource(std::string("0x0 0x1 0x2\0", 12)).ok());
}

TEST(LinkSpeed, Formats) {
    EXPECT_DOUBLE_EQ(*parse_link_speed("16.0 GT/s PCIe\n"), 16.0);
    EXPECT_DOUBLE_EQ(*parse_link_speed("8 GT/s"), 8.0);
    EXPECT_DOUBLE_EQ(*parse_link_speed("2.5 GT/s PCIe"), 2.5);
    EXPECT_EQ(parse_link_speed("Unknown").status().code(), Errc::kNotFound);
    EXPECT_EQ(parse_link_speed("fast").status().code(), Errc::kInvalidInput);
    EXPECT_EQ(parse_link_speed("-1 GT/s").status().code(), Errc::kInvalidInput);
}

TEST(BracketChoice, Formats) {
    EXPECT_EQ(*parse_bracket_choice("always [madvise] never\n"), "madvise");
    EXPECT_EQ(*parse_bracket_choice("always defer defer+madvise [madvise] never"), "madvise");
    EXPECT_FALSE(parse_bracket_choice("always madvise never").ok());
    EXPECT_FALSE(parse_bracket_choice("[always] [never]").ok());
    EXPECT_FALSE(parse_bracket_choice("[]").ok());
}

TEST(CpuinfoHypervisor, TheFirstFlagsLineDecides) {
    const char* guest =
        "processor\t: 0\nvendor_id\t: GenuineIntel\n"
        "flags\t\t: fpu vme de pse tsc msr hypervisor lahf_lm abm\n\n"
        "processor\t: 1\nflags\t\t: fpu vme de pse tsc msr hypervisor lahf_lm abm\n";
    EXPECT_TRUE(*parse_cpuinfo_hypervisor(guest));
    EXPECT_FALSE(*parse_cpuinfo_hypervisor("processor\t: 0\nflags\t\t: fpu vme hypervisorx vmx\n"));
    // Arm's /proc/cpuinfo has "Features", not "flags": no answer, not "bare metal".
    EXPECT_EQ(
        parse_cpuinfo_hypervisor("processor\t: 0\nFeatures\t: fp asimd evtstrm\n").status().code(),
        Errc::kNotFound);
    EXPECT_EQ(parse_cpuinfo_hypervisor("").status().code(), Errc::kNotFound);
}

TEST(Limits, NofileRow) {
    const char* text =
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max cpu time              unlimited            unlimited            seconds   \n"
        "Max open files            1024                 524288               files     \n";
    auto r = parse_limits_nofile(text);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->soft, 1024u);
    EXPECT_EQ(r->hard, 524288u);
    auto u = parse_limits_nofile(
        "Max open files            unlimited            unlimited            files\n");
    EXPECT_EQ(u->soft, Rlimit::kUnlimited);
    EXPECT_FALSE(parse_limits_nofile("Max cpu time unlimited unlimited").ok());
    EXPECT_FALSE(parse_limits_nofile("Max open files  lots  more files").ok());
}

TEST(Meminfo, Total) {
    EXPECT_EQ(*parse_meminfo_total("MemTotal:       527999872 kB\nMemFree: 1 kB\n"),
              527999872ull * 1024);
    EXPECT_FALSE(parse_meminfo_total("MemFree: 1 kB").ok());
    EXPECT_FALSE(parse_meminfo_total("MemTotal: lots kB").ok());
    EXPECT_FALSE(parse_meminfo_total("MemTotal: 99999999999999999999 kB").ok());
}

TEST(Environ, NulSeparatedAndFiltered) {
    std::string text("PATH=/bin\0NCCL_P2P_DISABLE=1\0NCCL_DEBUG=INFO\0=bad\0NOEQUALS\0", 57);
    auto m = parse_environ(text, [](const std::string& k) { return k.starts_with("NCCL_"); });
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m["NCCL_P2P_DISABLE"], "1");
}

TEST(Mountinfo, RealLinesAndEscapes) {
    auto m = parse_mountinfo_line(
        "36 35 259:1 / /mnt/my\\040data rw,noatime master:1 - ext4 /dev/nvme0n1p1 "
        "rw,errors=continue");
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->dev, "259:1");
    EXPECT_EQ(m->mount_point, "/mnt/my data");
    EXPECT_EQ(m->fs_type, "ext4");
    EXPECT_EQ(m->source, "/dev/nvme0n1p1");
    auto shm = parse_mountinfo_line(
        "29 24 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=65536k,inode64");
    ASSERT_TRUE(shm.ok());
    EXPECT_EQ(shm->super_options, "rw,size=65536k,inode64");
    EXPECT_FALSE(parse_mountinfo_line("36 35 259:1 / /mnt rw").ok());
    EXPECT_EQ(parse_mountinfo("garbage\n29 24 0:26 / /dev/shm rw - tmpfs tmpfs rw\n").size(), 1u);
}

TEST(TmpfsSize, Suffixes) {
    EXPECT_EQ(*parse_tmpfs_size("65536k", 0), 64ull << 20);
    EXPECT_EQ(*parse_tmpfs_size("2g", 0), 2ull << 30);
    EXPECT_EQ(*parse_tmpfs_size("50%", 1000), 500u);
    EXPECT_EQ(*parse_tmpfs_size("4096", 0), 4096u);
    EXPECT_FALSE(parse_tmpfs_size("lots", 0).ok());
    EXPECT_FALSE(parse_tmpfs_size("", 0).ok());
    EXPECT_FALSE(parse_tmpfs_size("99999999999999999999k", 0).ok());
}

TEST(NvidiaVersion, ProprietaryAndOpen) {
    EXPECT_EQ(*parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  "
                                    "Sun May 12 19:39:15 UTC 2024\nGCC version: x\n"),
              "535.183.01");
    EXPECT_EQ(
        *parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.127.05 "
                              " Release Build  (dvs-builder@U16)  Tue Oct  8 2024"),
        "550.127.05");
    EXPECT_FALSE(parse_nvidia_version("something else").ok());
    EXPECT_FALSE(parse_nvidia_version("NVRM version: no number here").ok());
}

TEST(SysctlConf, KeysValuesCommentsAndOptional) {
    std::vector<SysctlSetting> s;
    std::vector<SysctlLine> bad;
    parse_sysctl_conf(
        "# c\n; c\nvm.swappiness = 1\n-kernel.sched_latency_ns=2\nnet/ipv4/ip_forward=1\n"
        "junk line\nkey with space = 1\n-net.ipv4.conf.all.rp_filter\n",
        "/etc/sysctl.conf", s, bad);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].key, "vm.swappiness");
    EXPECT_EQ(s[0].line, 3);
    EXPECT_TRUE(s[1].optional);
    EXPECT_EQ(s[2].key, "net.ipv4.ip_forward");
    ASSERT_EQ(bad.size(), 2u);
    EXPECT_EQ(bad[0].line, 6);
}

TEST(SysctlConf, KeyPaths) {
    EXPECT_EQ(sysctl_key_path("kernel.sched_latency_ns"), "/proc/sys/kernel/sched_latency_ns");
    EXPECT_EQ(sysctl_key_dotted("net/ipv4/conf/eth0.100/rp_filter"),
              "net.ipv4.conf.eth0/100.rp_filter");
    EXPECT_EQ(sysctl_key_path("net.ipv4.conf.eth0/100.rp_filter"),
              "/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
}

}  // namespace
}  // namespace trainrig

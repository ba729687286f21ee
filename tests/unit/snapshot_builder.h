// Builders of in-memory Snapshots for rule tests: a healthy 2-node machine with GPUs, which each
// test then breaks in one way.
#pragma once

#include <string>

#include "snapshot/snapshot.h"

namespace trainrig::test {

inline PciResource bar(uint64_t start, uint64_t size, uint64_t flags = 0x14220c) {
    return {start, start + size - 1, flags};
}

inline PciDevice gpu(const std::string& address, uint64_t device_id = 0x20b2, int node = 0) {
    PciDevice d;
    d.address = address;
    d.vendor = Fact<uint64_t>::known(0x10de);
    d.device = Fact<uint64_t>::known(device_id);
    d.class_code = Fact<uint64_t>::known(0x030200);
    d.driver = Fact<std::string>::known("nvidia");
    d.numa_node = Fact<int64_t>::known(node);
    d.local_cpulist = Fact<std::string>::known(node == 0 ? "0-15" : "16-31");
    d.current_link_speed = Fact<double>::known(16.0);
    d.max_link_speed = Fact<double>::known(16.0);
    d.current_link_width = Fact<int64_t>::known(16);
    d.max_link_width = Fact<int64_t>::known(16);
    d.resources = Fact<std::vector<PciResource>>::known({bar(0xf1000000, 16 << 20, 0x40200),
                                                         bar(0x38000000000, 128ull << 30),
                                                         {0, 0, 0},
                                                         bar(0x3a000000000, 32 << 20),
                                                         {0, 0, 0},
                                                         {0, 0, 0},
                                                         {0, 0, 0}});
    d.iommu_group_type = Fact<std::string>::known("identity");
    return d;
}

inline KmsgRecord kmsg(uint64_t seq, const std::string& message, uint64_t usec = 1000000) {
    return {6, seq, usec, message};
}

// A healthy two-socket machine with four A100-SXM4-80GB GPUs.
inline Snapshot healthy() {
    Snapshot s;
    s.root = "/";
    // The GPU rules' NVML facts are the GPU tests' business (rules_gpu_test.cpp): here they
    // were not read, as under --root.
    s.nvml = Fact<NvmlFacts>::failed({Errc::kUnsupported, "NVML was not read"});
    s.host.hostname = Fact<std::string>::known("node1");
    s.host.kernel_release = Fact<std::string>::known("6.1.0-27-amd64");
    s.host.cmdline = Fact<std::string>::known("BOOT_IMAGE=/vmlinuz ro iommu=pt");
    s.kernel.swappiness = Fact<int64_t>::known(1);
    s.kernel.numa_balancing = Fact<int64_t>::known(0);
    s.kernel.file_max = Fact<int64_t>::known(9223372036854775807LL);
    s.kernel.nr_open = Fact<int64_t>::known(1048576);
    s.kernel.thp_enabled = Fact<std::string>::known("madvise");
    s.kernel.thp_defrag = Fact<std::string>::known("madvise");
    s.nofile = Fact<Rlimit>::known({1048576, 1048576});
    s.sysctl.proc_sys_present = true;
    s.sysctl.files = {"/etc/sysctl.conf"};
    s.sysctl.settings = {{"/etc/sysctl.conf", 3, "vm.swappiness", "1", false, true}};
    s.cpu_governors = Fact<std::map<std::string, int>>::known({{"performance", 64}});
    s.memory.total_bytes = Fact<uint64_t>::known(512ull << 30);
    EdacController mc;
    mc.name = "mc0";
    mc.mc_name = Fact<std::string>::known("F19h_M10h");
    mc.ce_count = Fact<uint64_t>::known(0);
    mc.ue_count = Fact<uint64_t>::known(0);
    s.memory.edac = Fact<std::vector<EdacController>>::known({mc});
    s.memory.shm = Fact<ShmMount>::known({256ull << 30, "default: half of MemTotal"});
    s.iommu_units = Fact<std::vector<std::string>>::known({"ivhd0"});
    s.pci_devices = Fact<std::vector<PciDevice>>::known(
        {gpu("0000:01:00.0", 0x20b2, 0), gpu("0000:41:00.0", 0x20b2, 0),
         gpu("0000:81:00.0", 0x20b2, 1), gpu("0000:c1:00.0", 0x20b2, 1)});
    s.nvidia.loaded = true;
    s.nvidia.version = Fact<std::string>::known("535.183.01");
    s.nvidia.version_line = Fact<std::string>::known(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024");
    s.nvidia.gpus = Fact<std::vector<std::string>>::known(
        {"0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c1:00.0"});
    KernelLog log;
    log.records_read = 1200;
    log.records = {kmsg(500, "nvidia: loading out-of-tree module taints kernel.")};
    s.kernel_log = Fact<KernelLog>::known(log);
    s.environment = Fact<Environment>::known({"/proc/self/environ", {}});
    s.infiniband = Fact<std::vector<std::string>>::absent();
    Topology t;
    t.packages = 2;
    t.cores = 32;
    t.pus = 64;
    t.numa_nodes = {{0, "0-15,32-47", 256ull << 30}, {1, "16-31,48-63", 256ull << 30}};
    s.topology = Fact<Topology>::known(t);
    return s;
}

inline PciDevice& gpu_at(Snapshot& s, size_t i) { return s.pci_devices.value().at(i); }

}  // namespace trainrig::test

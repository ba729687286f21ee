// NVML facts for rule tests: four healthy A100-SXM4-80GB on the bus ids of healthy(), each with
// 4 NVLinks to each peer, and a software stack that matches the driver.
#pragma once

#include "snapshot_builder.h"

namespace trainrig::test {

template <class T>
Fact<T> known(T v) {
    return Fact<T>::known(std::move(v));
}

template <class T>
Fact<T> unsupported(const std::string& fn = "nvmlX") {
    return Fact<T>::failed({Errc::kUnsupported, fn + ": not supported on this GPU"});
}

inline const char* kBus[] = {"0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c1:00.0"};

inline NvmlGpu nvml_gpu(int index, const std::string& bus, uint64_t device_id = 0x20b2) {
    NvmlGpu g;
    g.index = index;
    g.name = known<std::string>("NVIDIA A100-SXM4-80GB");
    g.uuid = known<std::string>("GPU-" + std::to_string(index));
    g.bus_id = known(bus);
    g.pci_device_id = known<uint64_t>(device_id);
    g.compute_capability = known<std::string>("8.0");
    g.memory_total_bytes = known<uint64_t>(85899345920ull);
    g.bar1_total_bytes = known<uint64_t>(128ull << 30);
    g.temperature_c = known<int64_t>(34);
    g.temperature_slowdown_c = known<int64_t>(89);
    g.temperature_shutdown_c = known<int64_t>(92);
    g.temperature_max_operating_c = known<int64_t>(85);
    g.power_draw_w = known(61.0);
    g.power_limit_w = known(400.0);
    g.power_default_limit_w = known(400.0);
    g.clocks.sm_mhz = known<int64_t>(210);
    g.clocks.sm_max_mhz = known<int64_t>(1410);
    g.clocks.mem_mhz = known<int64_t>(1593);
    g.clocks.mem_max_mhz = known<int64_t>(1593);
    g.clock_event_reasons = known<uint64_t>(0x1);
    g.pcie.gen = known<int64_t>(4);
    g.pcie.gen_max = known<int64_t>(4);
    g.pcie.gpu_gen_max = known<int64_t>(4);
    g.pcie.width = known<int64_t>(16);
    g.pcie.width_max = known<int64_t>(16);
    g.pcie.replay_count = known<uint64_t>(0);
    g.ecc.enabled = known(true);
    g.ecc.enabled_pending = known(true);
    g.ecc.volatile_uncorrected = known<uint64_t>(0);
    g.ecc.aggregate_uncorrected = known<uint64_t>(0);
    g.ecc.volatile_corrected = known<uint64_t>(0);
    g.ecc.aggregate_corrected = known<uint64_t>(0);
    g.remapped_rows = known(RemappedRows{});
    g.retired_pages = unsupported<RetiredPages>("nvmlDeviceGetRetiredPages");
    g.persistence_mode = known(true);
    g.mig = known(MigMode{});
    g.cpu_affinity = known<std::string>(index < 2 ? "0-15,32-47" : "16-31,48-63");
    g.fabric = unsupported<GpuFabric>("nvmlDeviceGetGpuFabricInfo");
    std::vector<NvLink> links;
    for (int peer = 0, link = 0; peer < 4; ++peer) {
        if (peer == index) continue;
        for (int k = 0; k < 4; ++k, ++link)
            links.push_back(
                {link, true, known<std::string>(kBus[peer]), known<std::string>("gpu")});
    }
    g.nvlinks = known(links);
    return g;
}

inline Snapshot healthy_gpus() {
    Snapshot s = healthy();
    s.host.uptime_seconds = known(86400.0);
    NvmlFacts n;
    n.library = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01";
    n.driver_version = known<std::string>("535.183.01");
    n.cuda_driver_version = known<int64_t>(12020);
    for (int i = 0; i < 4; ++i) n.gpus.push_back(nvml_gpu(i, kBus[i]));
    for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b)
            n.pairs.push_back({a, b, known<std::string>(a / 2 == b / 2 ? "NODE" : "SYSTEM")});
    for (auto& d : s.pci_devices.value())
        d.local_cpulist =
            known<std::string>(d.numa_node.value() == 0 ? "0-15,32-47" : "16-31,48-63");
    s.nvml = known(n);
    SoftwareStack st;
    st.cuda_runtime_version = known<int64_t>(12020);
    st.cuda_runtime_library = "/usr/local/cuda/lib64/libcudart.so.12";
    st.nccl_version = known<int64_t>(21903);
    st.nccl_library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2";
    TorchFacts t;
    t.version = "2.3.1+cu121";
    t.cuda = known<std::string>("12.1");
    t.nccl = known<std::string>("2.19.3");
    t.cuda_available = Fact<bool>::known(true);
    t.device_count = Fact<int64_t>::known(4);
    t.python = "/usr/bin/python3";
    st.torch = known(t);
    s.stack = known(st);
    s.nics = known(std::vector<Nic>{});
    return s;
}

inline NvmlGpu& nvml_at(Snapshot& s, size_t i) { return s.nvml.value().gpus.at(i); }

}  // namespace trainrig::test

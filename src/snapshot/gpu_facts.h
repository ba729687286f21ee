// What the driver says about each GPU (through NVML) and which CUDA/NCCL/PyTorch the machine
// would train with. Part of the Snapshot (snapshot.h); meanings and units in docs/formats.md.
//
// A field NVML does not report on this GPU (NOT_SUPPORTED, or an entry point this driver's NVML
// lacks) is a failed Fact with Errc::kUnsupported: rules treat it as "skip, with the reason",
// never as a pass or an error. Any other NVML error is a failed Fact of another kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/fact.h"

namespace trainrig {

struct GpuClocks {
    Fact<int64_t> sm_mhz;
    Fact<int64_t> sm_max_mhz;
    Fact<int64_t> mem_mhz;
    Fact<int64_t> mem_max_mhz;
    bool operator==(const GpuClocks&) const = default;
};

struct GpuPcie {
    Fact<int64_t> gen;
    Fact<int64_t> gen_max;      // the most this GPU and this slot can do together
    Fact<int64_t> gpu_gen_max;  // the most the GPU itself can do
    Fact<int64_t> width;
    Fact<int64_t> width_max;
    Fact<uint64_t> replay_count;  // since the driver loaded
    bool operator==(const GpuPcie&) const = default;
};

struct GpuEcc {
    Fact<bool> enabled;          // current mode
    Fact<bool> enabled_pending;  // mode after the next reboot
    Fact<uint64_t> volatile_uncorrected;
    Fact<uint64_t> aggregate_uncorrected;
    Fact<uint64_t> volatile_corrected;
    Fact<uint64_t> aggregate_corrected;
    bool operator==(const GpuEcc&) const = default;
};

// nvmlDeviceGetRemappedRows (Ampere and later).
struct RemappedRows {
    uint64_t correctable = 0;
    uint64_t uncorrectable = 0;
    bool pending = false;  // a remap waits for the GPU to be reset
    bool failure = false;  // a remap failed: no spare row left
    bool operator==(const RemappedRows&) const = default;
};

// Dynamic page retirement (before Ampere).
struct RetiredPages {
    uint64_t single_bit = 0;  // retired after multiple single-bit errors
    uint64_t double_bit = 0;
    Fact<bool> pending;  // retirements that wait for a reboot
    bool operator==(const RetiredPages&) const = default;
};

struct NvLink {
    int link = 0;
    bool active = false;
    Fact<std::string> remote_bus_id;  // 0000:4c:00.0
    Fact<std::string> remote_type;    // gpu, switch, ibmnpu, unknown
    bool operator==(const NvLink&) const = default;
};

// nvmlDeviceGetGpuFabricInfo (Hopper and later): the GPU's membership in the NVLink fabric.
struct GpuFabric {
    std::string state;   // not_supported, not_started, in_progress, completed
    std::string status;  // NVML return name of the registration: SUCCESS or why it failed
    bool operator==(const GpuFabric&) const = default;
};

// nvmlDeviceGetMigMode: whether the GPU is partitioned now, and what it will be after a reset.
struct MigMode {
    bool enabled = false;
    bool pending = false;
    bool operator==(const MigMode&) const = default;
};

struct NvmlGpu {
    int index = 0;
    bool lost = false;        // NVML answered GPU_IS_LOST
    std::string unreachable;  // why NVML gave no handle for this index ("" = it did)
    Fact<std::string> name;
    Fact<std::string> uuid;
    Fact<std::string> vbios_version;       // nvmlDeviceGetVbiosVersion: "96.00.99.00.01"
    Fact<std::string> bus_id;              // 0000:41:00.0, as sysfs writes it
    Fact<uint64_t> pci_device_id;          // the PCI device id (0x20b2), vendor stripped
    Fact<std::string> compute_capability;  // "8.0"
    Fact<uint64_t> memory_total_bytes;
    Fact<uint64_t> bar1_total_bytes;
    Fact<int64_t> temperature_c;
    Fact<int64_t> temperature_slowdown_c;
    Fact<int64_t> temperature_shutdown_c;
    Fact<int64_t> temperature_max_operating_c;
    Fact<double> power_draw_w;
    Fact<double> power_limit_w;          // enforced: the lowest of every limiter
    Fact<double> power_default_limit_w;  // the board's default software limit
    GpuClocks clocks;
    Fact<uint64_t> clock_event_reasons;  // nvmlClocksEventReasons bits
    GpuPcie pcie;
    GpuEcc ecc;
    Fact<RemappedRows> remapped_rows;
    Fact<RetiredPages> retired_pages;
    Fact<bool> persistence_mode;
    Fact<MigMode> mig;                  // NOT_SUPPORTED on parts without MIG: absent
    Fact<std::vector<NvLink>> nvlinks;  // the links this GPU has, active or not
    Fact<std::string> cpu_affinity;     // cpulist, "0-15,32-47"
    Fact<GpuFabric> fabric;
    bool operator==(const NvmlGpu&) const = default;
};

// nvmlDeviceGetTopologyCommonAncestor for a pair of GPUs (a < b).
struct GpuPair {
    int a = 0;
    int b = 0;
    Fact<std::string> level;  // INTERNAL, SINGLE, MULTIPLE, HOSTBRIDGE, NODE, SYSTEM
    bool operator==(const GpuPair&) const = default;
};

struct NvmlFacts {
    std::string library;  // the file that was loaded
    bool fake = false;    // the test library (TRAINRIG_FAKE_NVML)
    Fact<std::string> driver_version;
    Fact<int64_t> cuda_driver_version;  // 12020 = CUDA 12.2
    Fact<std::string> nvml_version;
    std::vector<NvmlGpu> gpus;
    std::vector<GpuPair> pairs;
    double seconds = 0;  // time the driver took to answer everything
    bool operator==(const NvmlFacts&) const = default;
};

struct TorchFacts {
    std::string version;
    Fact<std::string> cuda;  // torch.version.cuda; absent = a CPU-only build
    Fact<std::string> nccl;  // "2.21.5"; absent = built without NCCL
    // torch.cuda.is_available() and device_count(): known only when torch was imported
    // (`doctor --import-torch`); read from its metadata, they are failed with kUnsupported.
    Fact<bool> cuda_available;
    Fact<int64_t> device_count;
    std::string python;    // the interpreter it is installed for
    std::string location;  // the site directory it was found in (metadata), or empty (imported)
    bool operator==(const TorchFacts&) const = default;
};

struct SoftwareStack {
    Fact<int64_t> cuda_runtime_version;  // cudaRuntimeGetVersion: 12060 = 12.6
    std::string cuda_runtime_library;
    Fact<int64_t> nccl_version;  // ncclGetVersion: 22304 = 2.23.4
    std::string nccl_library;
    Fact<std::string> nvcc_version;  // "12.6.85"
    std::string nvcc_path;
    Fact<TorchFacts> torch;  // absent: no python3, or torch is not installed
    bool operator==(const SoftwareStack&) const = default;
};

}  // namespace trainrig

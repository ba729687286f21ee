// The fake NVML's picture of a machine, as read from a fixture (README.md has the JSON schema).
// Built once per first nvmlInit and never changed afterwards, so calls may read it without the
// library's lock. An empty optional is an answer of NOT_SUPPORTED.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvml/nvml_api.h"

namespace fake_nvml {

using trainrig::nvml::Return;

struct PciAddress {
    std::string bus_id;  // "00000000:41:00.0", as the fixture spells it
    unsigned domain = 0;
    unsigned bus = 0;
    unsigned device = 0;
};

struct NvLink {
    std::optional<bool> active;
    std::optional<PciAddress> remote_pci;
    std::optional<int> remote_type;  // kNvLinkDevice*
};

struct CpuRange {
    unsigned first = 0;
    unsigned last = 0;  // inclusive
};

struct RemappedRows {
    unsigned correctable = 0;
    unsigned uncorrectable = 0;
    bool pending = false;
    bool failure = false;
};

struct MigMode {
    bool current = false;
    bool pending = false;
};

struct Fabric {
    uint8_t state = trainrig::nvml::kGpuFabricStateNotSupported;
    Return status = trainrig::nvml::kSuccess;
    unsigned clique_id = 0;
    std::array<unsigned char, trainrig::nvml::kGpuFabricUuidLen> cluster_uuid{};
};

struct Gpu {
    unsigned index = 0;  // position in "gpus"
    std::optional<std::string> name;
    std::optional<std::string> uuid;
    std::optional<std::string> vbios_version;
    std::optional<PciAddress> pci;
    unsigned pci_device_id = 0;
    unsigned pci_subsystem_id = 0;
    std::optional<std::pair<int, int>> compute_capability;
    std::optional<trainrig::nvml::Memory> memory;
    std::optional<trainrig::nvml::Bar1Memory> bar1;
    std::optional<unsigned> temperature;
    std::map<int, unsigned> thresholds;  // by kTemperatureThreshold*
    std::optional<unsigned> power_usage_mw;
    std::optional<unsigned> power_limit_mw;
    std::optional<unsigned> power_default_limit_mw;
    std::optional<unsigned long long> energy_mj;
    std::map<int, unsigned> clocks;      // by kClock*
    std::map<int, unsigned> max_clocks;  // by kClock*
    std::optional<unsigned long long> clock_event_reasons;
    std::optional<trainrig::nvml::Utilization> utilization;
    std::optional<unsigned> pcie_gen;
    std::optional<unsigned> pcie_gen_max;
    std::optional<unsigned> pcie_gpu_gen_max;
    std::optional<unsigned> pcie_width;
    std::optional<unsigned> pcie_width_max;
    std::optional<unsigned> pcie_replay_counter;
    std::optional<bool> ecc_current;
    std::optional<bool> ecc_pending;
    std::map<std::pair<int, int>, unsigned long long> ecc_errors;  // by (error, counter) type
    std::optional<RemappedRows> remapped_rows;
    std::map<int, unsigned> retired_pages;  // page count by kPageRetirement* cause
    std::optional<bool> retired_pages_pending;
    std::optional<bool> persistence_mode;
    std::optional<MigMode> mig_mode;  // empty: a part without MIG
    std::optional<std::vector<NvLink>> nvlinks;
    std::optional<std::vector<CpuRange>> cpu_affinity;
    std::optional<Fabric> fabric;
    bool lost = false;
    std::map<std::string, Return, std::less<>> errors;  // entry point name -> forced code
};

struct Hang {
    std::string function;
    std::optional<unsigned> gpu;  // empty: every call of that name
    double seconds = 3600;
};

struct XidEvent {
    unsigned gpu = 0;
    unsigned long long xid = 0;
};

struct Model {
    Return init = trainrig::nvml::kSuccess;
    std::optional<std::string> driver_version;
    std::optional<std::string> nvml_version;
    std::optional<int> cuda_driver_version;
    std::optional<Hang> hang;
    std::vector<Gpu> gpus;
    std::vector<std::vector<int>> topology;  // [i][j] = kTopology*; short rows are NOT_SUPPORTED
    std::vector<XidEvent> events;
};

}  // namespace fake_nvml

// NVML loaded at run time with dlopen, so trainrig starts (and says "no NVIDIA driver") on
// machines without one, and tests load a fake library through the very same path.
#pragma once

#include <string>

#include "core/status.h"
#include "nvml/nvml_api.h"

namespace trainrig::nvml {

// The entry points trainrig uses. Each is resolved under its newest name first and falls back to
// older ones (nvmlInit_v2 -> nvmlInit, ...ClocksEventReasons -> ...ClocksThrottleReasons); a
// pointer stays null when this driver's NVML has none of the names, and calls through call()
// then answer FUNCTION_NOT_FOUND.
struct Functions {
    InitFn init = nullptr;
    ShutdownFn shutdown = nullptr;
    ErrorStringFn error_string = nullptr;
    SystemGetStringFn system_get_driver_version = nullptr;
    SystemGetStringFn system_get_nvml_version = nullptr;
    SystemGetCudaDriverVersionFn system_get_cuda_driver_version = nullptr;
    DeviceGetCountFn device_get_count = nullptr;
    DeviceGetHandleByIndexFn device_get_handle_by_index = nullptr;
    DeviceGetStringFn device_get_name = nullptr;
    DeviceGetStringFn device_get_uuid = nullptr;
    DeviceGetStringFn device_get_vbios_version = nullptr;
    DeviceGetPciInfoFn device_get_pci_info = nullptr;
    DeviceGetCudaComputeCapabilityFn device_get_cuda_compute_capability = nullptr;
    DeviceGetMemoryInfoFn device_get_memory_info = nullptr;
    DeviceGetBar1MemoryInfoFn device_get_bar1_memory_info = nullptr;
    DeviceGetTemperatureFn device_get_temperature = nullptr;
    DeviceGetTemperatureThresholdFn device_get_temperature_threshold = nullptr;
    DeviceGetUintFn device_get_power_usage = nullptr;
    DeviceGetUintFn device_get_enforced_power_limit = nullptr;
    DeviceGetUintFn device_get_power_management_default_limit = nullptr;
    DeviceGetUllFn device_get_total_energy_consumption = nullptr;
    DeviceGetClockFn device_get_clock_info = nullptr;
    DeviceGetClockFn device_get_max_clock_info = nullptr;
    DeviceGetUllFn device_get_current_clocks_event_reasons = nullptr;
    DeviceGetUtilizationRatesFn device_get_utilization_rates = nullptr;
    DeviceGetUintFn device_get_curr_pcie_link_generation = nullptr;
    DeviceGetUintFn device_get_max_pcie_link_generation = nullptr;
    DeviceGetUintFn device_get_gpu_max_pcie_link_generation = nullptr;
    DeviceGetUintFn device_get_curr_pcie_link_width = nullptr;
    DeviceGetUintFn device_get_max_pcie_link_width = nullptr;
    DeviceGetUintFn device_get_pcie_replay_counter = nullptr;
    DeviceGetEccModeFn device_get_ecc_mode = nullptr;
    DeviceGetTotalEccErrorsFn device_get_total_ecc_errors = nullptr;
    DeviceGetRemappedRowsFn device_get_remapped_rows = nullptr;
    DeviceGetRetiredPagesFn device_get_retired_pages = nullptr;
    DeviceGetEnableStateFn device_get_retired_pages_pending_status = nullptr;
    DeviceGetEnableStateFn device_get_persistence_mode = nullptr;
    DeviceGetMigModeFn device_get_mig_mode = nullptr;
    DeviceGetNvLinkStateFn device_get_nvlink_state = nullptr;
    DeviceGetNvLinkRemotePciInfoFn device_get_nvlink_remote_pci_info = nullptr;
    DeviceGetNvLinkRemoteDeviceTypeFn device_get_nvlink_remote_device_type = nullptr;
    DeviceGetCpuAffinityFn device_get_cpu_affinity = nullptr;
    DeviceGetTopologyCommonAncestorFn device_get_topology_common_ancestor = nullptr;
    DeviceGetGpuFabricInfoFn device_get_gpu_fabric_info = nullptr;
    EventSetCreateFn event_set_create = nullptr;
    DeviceRegisterEventsFn device_register_events = nullptr;
    EventSetWaitFn event_set_wait = nullptr;
    EventSetFreeFn event_set_free = nullptr;
    // The unversioned nvmlDeviceGetNvLinkRemotePciInfo fills the original, shorter
    // nvmlPciInfo_t: its bus id is in busIdLegacy's place, and busId holds reserved words.
    bool nvlink_remote_pci_info_is_v1 = false;
};

// The library name dlopen looks for: the driver installs it with the SONAME below.
inline constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";
// The fake library that tests build next to the trainrig binary (tests/fakes/).
inline constexpr const char* kFakeLibraryFile = "libtrainrig_fake_nvml.so";

// Where NVML comes from: TRAINRIG_NVML_LIBRARY if set; else the fake next to the binary when
// TRAINRIG_FAKE_NVML is set; else the driver's library. `fake` is true in the second case.
struct LibraryChoice {
    std::string path;
    bool fake = false;
    bool from_environment = false;  // either variable was set
};
LibraryChoice choose_library();

// What the environment asks of NVML is possible: TRAINRIG_NVML_LIBRARY, when it is a path (it
// has a /), names a file; TRAINRIG_FAKE_NVML names a fixture file; the fake library is never
// chosen without its fixture (it would answer "driver not loaded", a fault nobody planted). A bare
// name (libnvidia-ml.so.1) is the loader's to find, and may be absent: no driver.
Status check_library_environment();

class Library {
public:
    // dlopen + symbol lookup. kNotFound when the file is not there (no driver installed),
    // kInvalidInput when it is not an NVML library (no nvmlInit).
    static Result<Library> open(const std::string& path);

    // There is no dlclose: a driver may keep threads that run its code, so it stays mapped.

    const Functions& fn() const { return fn_; }
    const std::string& path() const { return path_; }

    // "nvmlDeviceGetTemperature: GPU is lost" style text for a return code.
    std::string describe(const char* function, Return r) const;

private:
    Library() = default;
    void* handle_ = nullptr;
    std::string path_;
    Functions fn_;
};

}  // namespace trainrig::nvml

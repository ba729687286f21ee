// Loading NVML: dlopen, then each entry point by its newest exported name, older names as
// fallbacks (the names are those of the public nvml.h; see nvml_api.h).
#include "nvml/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>

#include "core/text.h"

namespace trainrig::nvml {

namespace {

// Symbol lookup with fallbacks: the first name this library exports wins.
template <class Fn>
void resolve(void* handle, Fn& out, std::initializer_list<const char*> names) {
    for (const char* name : names)
        if (void* p = dlsym(handle, name)) {
            out = reinterpret_cast<Fn>(p);
            return;
        }
}

void resolve_all(void* h, Functions& f) {
    resolve(h, f.init, {"nvmlInit_v2", "nvmlInit"});
    resolve(h, f.shutdown, {"nvmlShutdown"});
    resolve(h, f.error_string, {"nvmlErrorString"});
    resolve(h, f.system_get_driver_version, {"nvmlSystemGetDriverVersion"});
    resolve(h, f.system_get_nvml_version, {"nvmlSystemGetNVMLVersion"});
    resolve(h, f.system_get_cuda_driver_version,
            {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
    resolve(h, f.device_get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    resolve(h, f.device_get_handle_by_index,
            {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    resolve(h, f.device_get_name, {"nvmlDeviceGetName"});
    resolve(h, f.device_get_uuid, {"nvmlDeviceGetUUID"});
    resolve(h, f.device_get_vbios_version, {"nvmlDeviceGetVbiosVersion"});
    // The unversioned nvmlDeviceGetPciInfo fills an older, shorter struct: never use it.
    resolve(h, f.device_get_pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
    resolve(h, f.device_get_cuda_compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
    resolve(h, f.device_get_memory_info, {"nvmlDeviceGetMemoryInfo"});
    resolve(h, f.device_get_bar1_memory_info, {"nvmlDeviceGetBAR1MemoryInfo"});
    resolve(h, f.device_get_temperature, {"nvmlDeviceGetTemperature"});
    resolve(h, f.device_get_temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"});
    resolve(h, f.device_get_power_usage, {"nvmlDeviceGetPowerUsage"});
    resolve(h, f.device_get_enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
    resolve(h, f.device_get_power_management_default_limit,
            {"nvmlDeviceGetPowerManagementDefaultLimit"});
    resolve(h, f.device_get_total_energy_consumption, {"nvmlDeviceGetTotalEnergyConsumption"});
    resolve(h, f.device_get_clock_info, {"nvmlDeviceGetClockInfo"});
    resolve(h, f.device_get_max_clock_info, {"nvmlDeviceGetMaxClockInfo"});
    // Renamed in NVML 12.2; the bits are the same.
    resolve(
        h, f.device_get_current_clocks_event_reasons,
        {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    resolve(h, f.device_get_utilization_rates, {"nvmlDeviceGetUtilizationRates"});
    resolve(h, f.device_get_curr_pcie_link_generation, {"nvmlDeviceGetCurrPcieLinkGeneration"});
    resolve(h, f.device_get_max_pcie_link_generation, {"nvmlDeviceGetMaxPcieLinkGeneration"});
    resolve(h, f.device_get_gpu_max_pcie_link_generation,
            {"nvmlDeviceGetGpuMaxPcieLinkGeneration"});
    resolve(h, f.device_get_curr_pcie_link_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
    resolve(h, f.device_get_max_pcie_link_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
    resolve(h, f.device_get_pcie_replay_counter, {"nvmlDeviceGetPcieReplayCounter"});
    resolve(h, f.device_get_ecc_mode, {"nvmlDeviceGetEccMode"});
    resolve(h, f.device_get_total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
    resolve(h, f.device_get_remapped_rows, {"nvmlDeviceGetRemappedRows"});
    resolve(h, f.device_get_retired_pages, {"nvmlDeviceGetRetiredPages"});
    resolve(h, f.device_get_retired_pages_pending_status,
            {"nvmlDeviceGetRetiredPagesPendingStatus"});
    resolve(h, f.device_get_persistence_mode, {"nvmlDeviceGetPersistenceMode"});
    resolve(h, f.device_get_mig_mode, {"nvmlDeviceGetMigMode"});
    resolve(h, f.device_get_nvlink_state, {"nvmlDeviceGetNvLinkState"});
    resolve(h, f.device_get_nvlink_remote_pci_info,
            {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"});
    resolve(h, f.device_get_nvlink_remote_device_type, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
    resolve(h, f.device_get_cpu_affinity, {"nvmlDeviceGetCpuAffinity"});
    resolve(h, f.device_get_topology_common_ancestor, {"nvmlDeviceGetTopologyCommonAncestor"});
    resolve(h, f.device_get_gpu_fabric_info, {"nvmlDeviceGetGpuFabricInfo"});
    resolve(h, f.event_set_create, {"nvmlEventSetCreate"});
    resolve(h, f.device_register_events, {"nvmlDeviceRegisterEvents"});
    resolve(h, f.event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
    resolve(h, f.event_set_free, {"nvmlEventSetFree"});
}

std::string self_directory() {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace

LibraryChoice choose_library() {
    if (const char* path = std::getenv("TRAINRIG_NVML_LIBRARY"); path && *path)
        return {path, std::getenv("TRAINRIG_FAKE_NVML") != nullptr, true};
    if (const char* fake = std::getenv("TRAINRIG_FAKE_NVML"); fake && *fake)
        return {self_directory() + "/" + kFakeLibraryFile, true, true};
    return {kDefaultLibrary, false, false};
}

Status check_library_environment() {
    std::error_code ec;
    const char* library = std::getenv("TRAINRIG_NVML_LIBRARY");
    if (library && std::string_view(library).find('/') != std::string_view::npos &&
        !std::filesystem::is_regular_file(library, ec))
        return {Errc::kNotFound,
                sanitize_text(fmt::format("TRAINRIG_NVML_LIBRARY={}: no such file", library)),
                "name the NVML library to load, or unset it to load the driver's"};
    const char* fixture = std::getenv("TRAINRIG_FAKE_NVML");
    if (fixture && *fixture && !std::filesystem::is_regular_file(fixture, ec))
        return {Errc::kNotFound,
                sanitize_text(fmt::format("TRAINRIG_FAKE_NVML={}: no such fixture file", fixture)),
                "it names the JSON the fake NVML answers from (tests/fixtures/nvml/)"};
    const LibraryChoice choice = choose_library();
    const std::string file = std::filesystem::path(choice.path).filename().string();
    if (file.starts_with("libtrainrig_fake_nvml") && !(fixture && *fixture))
        return {Errc::kInvalidInput,
                sanitize_text(fmt::format(
                    "TRAINRIG_NVML_LIBRARY={} is trainrig's fake NVML, which answers from the "
                    "fixture TRAINRIG_FAKE_NVML names, and TRAINRIG_FAKE_NVML is not set",
                    choice.path)),
                "set TRAINRIG_FAKE_NVML to a fixture (tests/fixtures/nvml/), or unset "
                "TRAINRIG_NVML_LIBRARY to read the driver"};
    return ok_status();
}

Result<Library> Library::open(const std::string& path) {
    // RTLD_LOCAL: NVML's symbols must not satisfy anything else loaded later.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        const bool missing = why && std::string_view(why).find("No such file") != std::string::npos;
        if (missing)
            return Status{Errc::kNotFound, sanitize_text(fmt::format(
                                               "{} was not found by the dynamic loader", path))};
        return Status{Errc::kInvalidInput,
                      sanitize_text(fmt::format("{} could not be loaded: {}", path,
                                                why ? why : "dlopen failed"))};
    }
    Library lib;
    lib.handle_ = handle;
    lib.path_ = sanitize_text(path);
    resolve_all(handle, lib.fn_);
    lib.fn_.nvlink_remote_pci_info_is_v1 = lib.fn_.device_get_nvlink_remote_pci_info &&
                                           !dlsym(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    if (!lib.fn_.init || !lib.fn_.shutdown || !lib.fn_.device_get_count ||
        !lib.fn_.device_get_handle_by_index)
        return Status{Errc::kInvalidInput,
                      sanitize_text(fmt::format(
                          "{} is not an NVML library (it exports no nvmlInit, nvmlShutdown, "
                          "nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex)",
                          path))};
    if (Dl_info info{}; dladdr(reinterpret_cast<void*>(lib.fn_.init), &info) && info.dli_fname)
        lib.path_ = sanitize_text(info.dli_fname);
    return lib;
}

std::string Library::describe(const char* function, Return r) const {
    const char* text = fn_.error_string ? fn_.error_string(r) : nullptr;
    const char* name = return_name(r);
    return fmt::format("{}: {} ({})", function, text && *text ? text : "error",
                       name ? name : fmt::format("NVML error {}", r));
}

}  // namespace trainrig::nvml

#include "fake_nvml_names.h"

#include <algorithm>
#include <cctype>

namespace fake_nvml {
namespace {

struct EntryPoint {
    std::string_view name;
    bool device_call;
};

// nvmlErrorString is missing on purpose: it answers without the fixture.
constexpr EntryPoint kEntryPoints[] = {
    {"nvmlInit_v2", false},
    {"nvmlInit", false},
    {"nvmlInitWithFlags", false},
    {"nvmlShutdown", false},
    {"nvmlSystemGetDriverVersion", false},
    {"nvmlSystemGetNVMLVersion", false},
    {"nvmlSystemGetCudaDriverVersion", false},
    {"nvmlSystemGetCudaDriverVersion_v2", false},
    {"nvmlDeviceGetCount", false},
    {"nvmlDeviceGetCount_v2", false},
    {"nvmlDeviceGetHandleByIndex", true},
    {"nvmlDeviceGetHandleByIndex_v2", true},
    {"nvmlDeviceGetName", true},
    {"nvmlDeviceGetUUID", true},
    {"nvmlDeviceGetVbiosVersion", true},
    {"nvmlDeviceGetPciInfo_v2", true},
    {"nvmlDeviceGetPciInfo_v3", true},
    {"nvmlDeviceGetMemoryInfo", true},
    {"nvmlDeviceGetBAR1MemoryInfo", true},
    {"nvmlDeviceGetTemperature", true},
    {"nvmlDeviceGetTemperatureThreshold", true},
    {"nvmlDeviceGetPowerUsage", true},
    {"nvmlDeviceGetEnforcedPowerLimit", true},
    {"nvmlDeviceGetPowerManagementDefaultLimit", true},
    {"nvmlDeviceGetTotalEnergyConsumption", true},
    {"nvmlDeviceGetClockInfo", true},
    {"nvmlDeviceGetMaxClockInfo", true},
    {"nvmlDeviceGetCurrentClocksEventReasons", true},
    {"nvmlDeviceGetCurrentClocksThrottleReasons", true},
    {"nvmlDeviceGetUtilizationRates", true},
    {"nvmlDeviceGetCurrPcieLinkGeneration", true},
    {"nvmlDeviceGetMaxPcieLinkGeneration", true},
    {"nvmlDeviceGetGpuMaxPcieLinkGeneration", true},
    {"nvmlDeviceGetCurrPcieLinkWidth", true},
    {"nvmlDeviceGetMaxPcieLinkWidth", true},
    {"nvmlDeviceGetPcieReplayCounter", true},
    {"nvmlDeviceGetEccMode", true},
    {"nvmlDeviceGetTotalEccErrors", true},
    {"nvmlDeviceGetRemappedRows", true},
    {"nvmlDeviceGetRetiredPages", true},
    {"nvmlDeviceGetRetiredPagesPendingStatus", true},
    {"nvmlDeviceGetPersistenceMode", true},
    {"nvmlDeviceGetMigMode", true},
    {"nvmlDeviceGetNvLinkState", true},
    {"nvmlDeviceGetNvLinkRemotePciInfo", true},
    {"nvmlDeviceGetNvLinkRemotePciInfo_v2", true},
    {"nvmlDeviceGetNvLinkRemoteDeviceType", true},
    {"nvmlDeviceGetCpuAffinity", true},
    {"nvmlDeviceGetTopologyCommonAncestor", true},
    {"nvmlDeviceGetCudaComputeCapability", true},
    {"nvmlDeviceGetGpuFabricInfo", true},
    {"nvmlEventSetCreate", false},
    {"nvmlDeviceRegisterEvents", true},
    {"nvmlEventSetWait", true},  // concerns the GPUs registered on the set
    {"nvmlEventSetWait_v2", true},
    {"nvmlEventSetFree", false},
};

// "nvmlDeviceGetPciInfo_v3" -> "nvmlDeviceGetPciInfo"; a name without a _vN suffix is kept.
std::string_view unversioned(std::string_view name) {
    const auto pos = name.rfind("_v");
    if (pos == std::string_view::npos || pos + 2 == name.size()) return name;
    const auto digits = name.substr(pos + 2);
    const bool all_digits = std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    return all_digits ? name.substr(0, pos) : name;
}

}  // namespace

bool names_call(std::string_view key, std::string_view function) {
    return key == function || key == unversioned(function);
}

std::optional<bool> names_device_call(std::string_view key) {
    for (const auto& entry : kEntryPoints)
        if (names_call(key, entry.name)) return entry.device_call;
    return std::nullopt;
}

}  // namespace fake_nvml

// The part of the NVML C ABI that trainrig uses, declared here so that trainrig needs neither the
// driver nor NVIDIA's header to build. Written from the documented API (NVML API Reference,
// docs.nvidia.com/deploy/nvml-api, and the public nvml.h as shipped in NVIDIA/go-nvml
// gen/nvml/nvml.h): every value and layout below is the one those documents give. The library
// itself is loaded at run time (nvml/nvml_library.h); tests load a fake with the same exports
// (tests/fakes/).
#pragma once

#include <cstdint>
#include <string_view>

namespace trainrig::nvml {

// nvmlReturn_t
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorUnknown = 999;

struct ReturnName {
    Return code;
    const char* name;  // NVML_SUCCESS -> "SUCCESS", NVML_ERROR_GPU_IS_LOST -> "GPU_IS_LOST"
};
inline constexpr ReturnName kReturnNames[] = {
    {kSuccess, "SUCCESS"},
    {kErrorUninitialized, "UNINITIALIZED"},
    {kErrorInvalidArgument, "INVALID_ARGUMENT"},
    {kErrorNotSupported, "NOT_SUPPORTED"},
    {kErrorNoPermission, "NO_PERMISSION"},
    {kErrorNotFound, "NOT_FOUND"},
    {kErrorInsufficientSize, "INSUFFICIENT_SIZE"},
    {kErrorDriverNotLoaded, "DRIVER_NOT_LOADED"},
    {kErrorTimeout, "TIMEOUT"},
    {kErrorLibraryNotFound, "LIBRARY_NOT_FOUND"},
    {kErrorFunctionNotFound, "FUNCTION_NOT_FOUND"},
    {kErrorGpuIsLost, "GPU_IS_LOST"},
    {kErrorUnknown, "UNKNOWN"},
};
// The name of a return code, or nullptr for a code not listed above.
inline const char* return_name(Return r) {
    for (const auto& n : kReturnNames)
        if (n.code == r) return n.name;
    return nullptr;
}
// The code of a name ("GPU_IS_LOST"); -1 when the name is not one of the codes above.
inline Return return_from_name(std::string_view name) {
    for (const auto& n : kReturnNames)
        if (name == n.name) return n.code;
    return -1;
}

// nvmlDevice_t and nvmlEventSet_t are opaque pointers.
using Device = struct DeviceOpaque*;
using EventSet = struct EventSetOpaque*;

// nvmlEnableState_t
inline constexpr int kFeatureDisabled = 0;
inline constexpr int kFeatureEnabled = 1;
// NVML_DEVICE_MIG_DISABLE / NVML_DEVICE_MIG_ENABLE (nvmlDeviceGetMigMode)
inline constexpr unsigned kDeviceMigDisable = 0;
inline constexpr unsigned kDeviceMigEnable = 1;

// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;
// nvmlTemperatureThresholds_t
inline constexpr int kTemperatureThresholdShutdown = 0;
inline constexpr int kTemperatureThresholdSlowdown = 1;
inline constexpr int kTemperatureThresholdMemMax = 2;
inline constexpr int kTemperatureThresholdGpuMax = 3;

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlClocksEventReasons (called ClocksThrottleReasons before NVML 12.2; same bits).
inline constexpr uint64_t kClocksEventGpuIdle = 0x1;
inline constexpr uint64_t kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kClocksEventSwPowerCap = 0x4;
inline constexpr uint64_t kClocksEventHwSlowdown = 0x8;
inline constexpr uint64_t kClocksEventSyncBoost = 0x10;
inline constexpr uint64_t kClocksEventSwThermalSlowdown = 0x20;
inline constexpr uint64_t kClocksEventHwThermalSlowdown = 0x40;
inline constexpr uint64_t kClocksEventHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kClocksEventDisplayClockSetting = 0x100;

// nvmlMemoryErrorType_t, nvmlEccCounterType_t
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;

// nvmlPageRetirementCause_t
inline constexpr int kPageRetirementMultipleSingleBitEcc = 0;
inline constexpr int kPageRetirementDoubleBitEcc = 1;

// nvmlGpuTopologyLevel_t
inline constexpr int kTopologyInternal = 0;
inline constexpr int kTopologySingle = 10;
inline constexpr int kTopologyMultiple = 20;
inline constexpr int kTopologyHostbridge = 30;
inline constexpr int kTopologyNode = 40;
inline constexpr int kTopologySystem = 50;

// nvmlIntNvLinkDeviceType_t
inline constexpr int kNvLinkDeviceGpu = 0x00;
inline constexpr int kNvLinkDeviceIbmNpu = 0x01;
inline constexpr int kNvLinkDeviceSwitch = 0x02;
inline constexpr int kNvLinkDeviceUnknown = 0xFF;

// nvmlGpuFabricState_t
inline constexpr uint8_t kGpuFabricStateNotSupported = 0;
inline constexpr uint8_t kGpuFabricStateNotStarted = 1;
inline constexpr uint8_t kGpuFabricStateInProgress = 2;
inline constexpr uint8_t kGpuFabricStateCompleted = 3;

// Event types (nvmlEventType*).
inline constexpr uint64_t kEventTypeXidCriticalError = 0x8;

// NVML_NVLINK_MAX_LINKS: 18 up to the CUDA 13.2 headers, 36 since; links past a GPU's last
// answer INVALID_ARGUMENT (or NOT_SUPPORTED), which ends the enumeration.
inline constexpr unsigned kNvLinkMaxLinks = 36;
inline constexpr unsigned kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceVbiosVersionBufferSize =
    32;  // NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_...
inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;    // NVML_SYSTEM_NVML_VERSION_...
inline constexpr unsigned kDevicePciBusIdBufferSize = 32;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kGpuFabricUuidLen = 16;          // NVML_GPU_FABRIC_UUID_LEN

// nvmlPciInfo_t (the layout of the _v2/_v3 entry points).
struct PciInfo {
    char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;  // (device id << 16) | vendor id
    unsigned int pciSubSystemId;
    char busId[kDevicePciBusIdBufferSize];  // "00000000:41:00.0"
};

// nvmlMemory_t
struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

// nvmlBAR1Memory_t
struct Bar1Memory {
    unsigned long long bar1Total;
    unsigned long long bar1Free;
    unsigned long long bar1Used;
};

// nvmlUtilization_t
struct Utilization {
    unsigned int gpu;
    unsigned int memory;
};

// nvmlGpuFabricInfo_t
struct GpuFabricInfo {
    unsigned char clusterUuid[kGpuFabricUuidLen];
    Return status;
    unsigned int cliqueId;
    uint8_t state;
};

// nvmlEventData_t
struct EventData {
    Device device;
    unsigned long long eventType;
    unsigned long long eventData;  // the Xid for kEventTypeXidCriticalError
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

// Function types, one per entry point; the exported names are listed in nvml_library.cpp.
using InitFn = Return (*)();
using InitWithFlagsFn = Return (*)(unsigned int);
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetStringFn = Return (*)(char*, unsigned int);
using SystemGetCudaDriverVersionFn = Return (*)(int*);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetBar1MemoryInfoFn = Return (*)(Device, Bar1Memory*);
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);
using DeviceGetTemperatureThresholdFn = Return (*)(Device, int, unsigned int*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);
using DeviceGetUllFn = Return (*)(Device, unsigned long long*);
using DeviceGetClockFn = Return (*)(Device, int, unsigned int*);
using DeviceGetEccModeFn = Return (*)(Device, int*, int*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*,
                                           unsigned int*);
using DeviceGetRetiredPagesFn = Return (*)(Device, int, unsigned int*, unsigned long long*);
using DeviceGetEnableStateFn = Return (*)(Device, int*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, int*);
using DeviceGetNvLinkRemotePciInfoFn = Return (*)(Device, unsigned int, PciInfo*);
using DeviceGetNvLinkRemoteDeviceTypeFn = Return (*)(Device, unsigned int, int*);
using DeviceGetCpuAffinityFn = Return (*)(Device, unsigned int, unsigned long*);
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, int*);
using DeviceGetCudaComputeCapabilityFn = Return (*)(Device, int*, int*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetGpuFabricInfoFn = Return (*)(Device, GpuFabricInfo*);
using EventSetCreateFn = Return (*)(EventSet*);
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);
using EventSetFreeFn = Return (*)(EventSet);

}  // namespace trainrig::nvml

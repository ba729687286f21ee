// Entry points that read one GPU's identity, memory, thermals, power, clocks and PCIe link.
#include "fake_nvml_export.h"

using namespace trainrig::nvml;
using namespace fake_nvml;

// The value stored under `key`, or nothing: a member missing from the fixture.
static std::optional<unsigned> lookup(const std::map<int, unsigned>& values, int key) {
    const auto it = values.find(key);
    return it == values.end() ? std::nullopt : std::optional(it->second);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetName(Device device, char* name, unsigned int length) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put_string(call.gpu->name, name, length);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetUUID(Device device, char* uuid, unsigned int length) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put_string(call.gpu->uuid, uuid, length);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetVbiosVersion(Device device, char* version,
                                                  unsigned int length) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put_string(call.gpu->vbios_version, version, length);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMemoryInfo(Device device, Memory* memory) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->memory, memory);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetBAR1MemoryInfo(Device device, Bar1Memory* bar1) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->bar1, bar1);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTemperature(Device device, int sensor, unsigned int* temp) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (sensor != kTemperatureGpu) return kErrorInvalidArgument;
    return put(call.gpu->temperature, temp);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTemperatureThreshold(Device device, int type,
                                                          unsigned int* temp) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (type < kTemperatureThresholdShutdown || type > kTemperatureThresholdGpuMax)
        return kErrorInvalidArgument;
    return put(lookup(call.gpu->thresholds, type), temp);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPowerUsage(Device device, unsigned int* milliwatts) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->power_usage_mw, milliwatts);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetEnforcedPowerLimit(Device device, unsigned int* milliwatts) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->power_limit_mw, milliwatts);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPowerManagementDefaultLimit(Device device,
                                                                 unsigned int* milliwatts) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->power_default_limit_mw, milliwatts);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTotalEnergyConsumption(Device device,
                                                            unsigned long long* millijoules) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->energy_mj, millijoules);
}

static Return clock_mhz(const char* function, Device device, int type, unsigned int* mhz,
                        std::map<int, unsigned> Gpu::*clocks) {
    const Call call = begin_device_call(function, device);
    if (call.rc != kSuccess) return call.rc;
    if (type != kClockGraphics && type != kClockSm && type != kClockMem)
        return kErrorInvalidArgument;
    return put(lookup(call.gpu->*clocks, type), mhz);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetClockInfo(Device device, int type, unsigned int* mhz) {
    return clock_mhz(__func__, device, type, mhz, &Gpu::clocks);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMaxClockInfo(Device device, int type, unsigned int* mhz) {
    return clock_mhz(__func__, device, type, mhz, &Gpu::max_clocks);
}

static Return clock_event_reasons(const char* function, Device device,
                                  unsigned long long* reasons) {
    const Call call = begin_device_call(function, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->clock_event_reasons, reasons);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetCurrentClocksEventReasons(Device device,
                                                               unsigned long long* reasons) {
    return clock_event_reasons(__func__, device, reasons);
}
#endif

FAKE_NVML_EXPORT Return nvmlDeviceGetCurrentClocksThrottleReasons(Device device,
                                                                  unsigned long long* reasons) {
    return clock_event_reasons(__func__, device, reasons);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetUtilizationRates(Device device, Utilization* utilization) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    // NVML reference, nvmlDeviceGetUtilizationRates: "On MIG-enabled GPUs, querying device
    // utilization rates is not currently supported."
    if (call.gpu->mig_mode && call.gpu->mig_mode->current) return kErrorNotSupported;
    return put(call.gpu->utilization, utilization);
}

static Return pcie_value(const char* function, Device device, unsigned int* value,
                         std::optional<unsigned> Gpu::*member) {
    const Call call = begin_device_call(function, device);
    if (call.rc != kSuccess) return call.rc;
    return put(call.gpu->*member, value);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCurrPcieLinkGeneration(Device device, unsigned int* gen) {
    return pcie_value(__func__, device, gen, &Gpu::pcie_gen);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMaxPcieLinkGeneration(Device device, unsigned int* gen) {
    return pcie_value(__func__, device, gen, &Gpu::pcie_gen_max);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetGpuMaxPcieLinkGeneration(Device device, unsigned int* gen) {
    return pcie_value(__func__, device, gen, &Gpu::pcie_gpu_gen_max);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCurrPcieLinkWidth(Device device, unsigned int* width) {
    return pcie_value(__func__, device, width, &Gpu::pcie_width);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMaxPcieLinkWidth(Device device, unsigned int* width) {
    return pcie_value(__func__, device, width, &Gpu::pcie_width_max);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPcieReplayCounter(Device device, unsigned int* count) {
    return pcie_value(__func__, device, count, &Gpu::pcie_replay_counter);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCudaComputeCapability(Device device, int* major, int* minor) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!major || !minor) return kErrorInvalidArgument;
    if (!call.gpu->compute_capability) return kErrorNotSupported;
    *major = call.gpu->compute_capability->first;
    *minor = call.gpu->compute_capability->second;
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPersistenceMode(Device device, int* mode) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put_enable_state(call.gpu->persistence_mode, mode);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMigMode(Device device, unsigned int* current,
                                             unsigned int* pending) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!current || !pending) return kErrorInvalidArgument;
    if (!call.gpu->mig_mode) return kErrorNotSupported;
    auto mode = [](bool on) {
        return on ? trainrig::nvml::kDeviceMigEnable : trainrig::nvml::kDeviceMigDisable;
    };
    *current = mode(call.gpu->mig_mode->current);
    *pending = mode(call.gpu->mig_mode->pending);
    return kSuccess;
}

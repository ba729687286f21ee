// Entry points that concern the library and the system: initialisation, versions, the GPU
// count and handles.
#include "fake_nvml_export.h"

using namespace trainrig::nvml;
using namespace fake_nvml;

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlInit_v2() { return init(__func__); }
#endif

FAKE_NVML_EXPORT Return nvmlInit() { return init(__func__); }

// The flags (no GPUs / no attach) change nothing a fixture can describe.
FAKE_NVML_EXPORT Return nvmlInitWithFlags(unsigned int /*flags*/) { return init(__func__); }

FAKE_NVML_EXPORT Return nvmlShutdown() { return shutdown(); }

FAKE_NVML_EXPORT const char* nvmlErrorString(Return result) {
    switch (result) {
        case kSuccess:
            return "Success";
        case kErrorUninitialized:
            return "Uninitialized";
        case kErrorInvalidArgument:
            return "Invalid Argument";
        case kErrorNotSupported:
            return "Not Supported";
        case kErrorNoPermission:
            return "Insufficient Permissions";
        case kErrorNotFound:
            return "Not Found";
        case kErrorInsufficientSize:
            return "Insufficient Size";
        case kErrorDriverNotLoaded:
            return "Driver Not Loaded";
        case kErrorTimeout:
            return "Timeout";
        case kErrorLibraryNotFound:
            return "NVML Shared Library Not Found";
        case kErrorFunctionNotFound:
            return "Function Not Found";
        case kErrorGpuIsLost:
            return "GPU is lost";
        default:
            return "Unknown Error";
    }
}

FAKE_NVML_EXPORT Return nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    const Call call = begin_system_call(__func__);
    if (call.rc != kSuccess) return call.rc;
    return put_string(call.model->driver_version, version, length);
}

FAKE_NVML_EXPORT Return nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
    const Call call = begin_system_call(__func__);
    if (call.rc != kSuccess) return call.rc;
    return put_string(call.model->nvml_version, version, length);
}

static Return cuda_driver_version(const char* function, int* version) {
    const Call call = begin_system_call(function);
    if (call.rc != kSuccess) return call.rc;
    return put(call.model->cuda_driver_version, version);
}

FAKE_NVML_EXPORT Return nvmlSystemGetCudaDriverVersion(int* version) {
    return cuda_driver_version(__func__, version);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
    return cuda_driver_version(__func__, version);
}
#endif

static Return device_count(const char* function, unsigned int* count) {
    const Call call = begin_system_call(function);
    if (call.rc != kSuccess) return call.rc;
    return put(std::optional(call.model->gpus.size()), count);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCount(unsigned int* count) {
    return device_count(__func__, count);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetCount_v2(unsigned int* count) {
    return device_count(__func__, count);
}
#endif

static Return handle_by_index(const char* function, unsigned int index, Device* device) {
    const Call call = begin_index_call(function, index);
    if (call.rc != kSuccess) return call.rc;
    return put(std::optional(handle_of(*call.gpu)), device);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetHandleByIndex(unsigned int index, Device* device) {
    return handle_by_index(__func__, index, device);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, Device* device) {
    return handle_by_index(__func__, index, device);
}
#endif

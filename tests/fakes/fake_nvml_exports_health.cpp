// Entry points that report a GPU's memory health (ECC, row remapping, page retirement) and its
// NVLink fabric registration.
#include "fake_nvml_export.h"

using namespace trainrig::nvml;
using namespace fake_nvml;

FAKE_NVML_EXPORT Return nvmlDeviceGetEccMode(Device device, int* current, int* pending) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!current || !pending) return kErrorInvalidArgument;
    if (!call.gpu->ecc_current || !call.gpu->ecc_pending) return kErrorNotSupported;
    put_enable_state(call.gpu->ecc_current, current);
    return put_enable_state(call.gpu->ecc_pending, pending);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTotalEccErrors(Device device, int error_type, int counter_type,
                                                    unsigned long long* count) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if ((error_type != kMemoryErrorCorrected && error_type != kMemoryErrorUncorrected) ||
        (counter_type != kVolatileEcc && counter_type != kAggregateEcc))
        return kErrorInvalidArgument;
    const auto it = call.gpu->ecc_errors.find({error_type, counter_type});
    return put(it == call.gpu->ecc_errors.end() ? std::nullopt : std::optional(it->second), count);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetRemappedRows(Device device, unsigned int* correctable,
                                                  unsigned int* uncorrectable,
                                                  unsigned int* pending, unsigned int* failure) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!correctable || !uncorrectable || !pending || !failure) return kErrorInvalidArgument;
    if (!call.gpu->remapped_rows) return kErrorNotSupported;
    const RemappedRows& rows = *call.gpu->remapped_rows;
    *correctable = rows.correctable;
    *uncorrectable = rows.uncorrectable;
    *pending = rows.pending ? 1 : 0;
    *failure = rows.failure ? 1 : 0;
    return kSuccess;
}
#endif

// Made-up page addresses: distinct, page aligned, and telling the two causes apart.
static unsigned long long retired_page_address(int cause, unsigned index) {
    return (static_cast<unsigned long long>(cause + 1) << 32) + 0x1000ull * index;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetRetiredPages(Device device, int cause,
                                                  unsigned int* page_count,
                                                  unsigned long long* addresses) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!page_count) return kErrorInvalidArgument;
    if (cause != kPageRetirementMultipleSingleBitEcc && cause != kPageRetirementDoubleBitEcc)
        return kErrorInvalidArgument;
    const auto it = call.gpu->retired_pages.find(cause);
    if (it == call.gpu->retired_pages.end()) return kErrorNotSupported;
    const unsigned count = it->second;
    // A buffer too small (the documented size query passes 0) learns the size it needs.
    if (*page_count < count) {
        *page_count = count;
        return kErrorInsufficientSize;
    }
    if (count > 0 && !addresses) return kErrorInvalidArgument;
    for (unsigned i = 0; i < count; ++i) addresses[i] = retired_page_address(cause, i);
    *page_count = count;
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetRetiredPagesPendingStatus(Device device, int* pending) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    return put_enable_state(call.gpu->retired_pages_pending, pending);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlDeviceGetGpuFabricInfo(Device device, GpuFabricInfo* info) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    if (!info) return kErrorInvalidArgument;
    if (!call.gpu->fabric) return kErrorNotSupported;
    const Fabric& fabric = *call.gpu->fabric;
    std::memcpy(info->clusterUuid, fabric.cluster_uuid.data(), fabric.cluster_uuid.size());
    info->status = fabric.status;
    info->cliqueId = fabric.clique_id;
    info->state = fabric.state;
    return kSuccess;
}
#endif

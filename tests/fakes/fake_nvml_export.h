// Shared by the files that define the extern "C" entry points. Each entry point is named by
// __func__ when it checks the fixture, so "hang" and "errors" see the exported name itself.
#pragma once

#include <cstring>
#include <optional>
#include <string>

#include "fake_nvml_model.h"
#include "fake_nvml_state.h"

// The library is built with hidden visibility; only NVML's names are exported.
#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace fake_nvml {

// Hands a fixture value out the way NVML getters do: a null out-pointer is the caller's mistake
// even when the value is missing.
template <class Value, class Out>
Return put(const std::optional<Value>& value, Out* out) {
    if (!out) return trainrig::nvml::kErrorInvalidArgument;
    if (!value) return trainrig::nvml::kErrorNotSupported;
    *out = static_cast<Out>(*value);
    return trainrig::nvml::kSuccess;
}

inline Return put_enable_state(const std::optional<bool>& value, int* out) {
    if (!value) return put(std::optional<int>{}, out);
    return put(std::optional<int>(*value ? trainrig::nvml::kFeatureEnabled
                                         : trainrig::nvml::kFeatureDisabled),
               out);
}

inline Return put_string(const std::optional<std::string>& value, char* buffer, unsigned int size) {
    if (!buffer) return trainrig::nvml::kErrorInvalidArgument;
    if (!value) return trainrig::nvml::kErrorNotSupported;
    if (value->size() >= size) return trainrig::nvml::kErrorInsufficientSize;
    std::memcpy(buffer, value->c_str(), value->size() + 1);
    return trainrig::nvml::kSuccess;
}

// Fills every field of the nvmlPciInfo_t layout the versioned entry points use.
void fill_pci_info(const PciAddress& address, unsigned device_id, unsigned subsystem_id,
                   trainrig::nvml::PciInfo& info);

// Fills only the fields the first nvmlPciInfo_t had (busId[16] where busIdLegacy now is, then
// domain..pciSubSystemId): callers of an unversioned entry point may pass that smaller struct.
void fill_pci_info_v1(const PciAddress& address, unsigned device_id, unsigned subsystem_id,
                      trainrig::nvml::PciInfo& info);

}  // namespace fake_nvml

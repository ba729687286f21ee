// The entry point names a fixture's "hang" and "errors" may use, and how a name in a fixture
// matches a call: "nvmlDeviceGetCount_v2" names only that entry point, while the unversioned
// "nvmlDeviceGetCount" names every version, so a fixture need not know which one trainrig picks.
#pragma once

#include <optional>
#include <string_view>

namespace fake_nvml {

// Whether the fixture name `key` covers a call of entry point `function`.
bool names_call(std::string_view key, std::string_view function);

// For a name a fixture may use: whether the entry points it covers concern one GPU (a device
// call) rather than the whole system. Empty for a name that covers no entry point.
std::optional<bool> names_device_call(std::string_view key);

}  // namespace fake_nvml

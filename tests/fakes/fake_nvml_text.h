// The string formats a fixture uses for values NVML hands out as numbers or bytes.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "fake_nvml_model.h"

namespace fake_nvml {

// "00000000:41:00.0": the 8-hex-digit domain form of nvmlPciInfo_t.busId.
std::optional<PciAddress> parse_pci_address(std::string_view text);

// A Linux cpulist ("0-15,32-47", "" for none), ranges in any order.
std::optional<std::vector<CpuRange>> parse_cpulist(std::string_view text);

// 32 hex digits; dashes are skipped so a UUID written the usual way is accepted too.
std::optional<std::array<unsigned char, trainrig::nvml::kGpuFabricUuidLen>> parse_uuid_bytes(
    std::string_view text);

}  // namespace fake_nvml

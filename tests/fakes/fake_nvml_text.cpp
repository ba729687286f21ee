#include "fake_nvml_text.h"

#include <cctype>
#include <charconv>
#include <string>

namespace fake_nvml {
namespace {

bool all_hex(std::string_view text) {
    for (char c : text)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// The whole of `text` as a number; no sign, no prefix, no spaces.
std::optional<unsigned> whole_number(std::string_view text, int base) {
    if (text.empty()) return std::nullopt;
    unsigned value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value, base);
    if (stop != end || error != std::errc{}) return std::nullopt;
    return value;
}

}  // namespace

std::optional<PciAddress> parse_pci_address(std::string_view text) {
    if (text.size() != 16 || text[8] != ':' || text[11] != ':' || text[14] != '.') {
        return std::nullopt;
    }
    const auto domain = text.substr(0, 8);
    const auto bus = text.substr(9, 2);
    const auto device = text.substr(12, 2);
    if (!all_hex(domain) || !all_hex(bus) || !all_hex(device) || !all_hex(text.substr(15))) {
        return std::nullopt;
    }
    return PciAddress{std::string(text), *whole_number(domain, 16), *whole_number(bus, 16),
                      *whole_number(device, 16)};
}

std::optional<std::vector<CpuRange>> parse_cpulist(std::string_view text) {
    std::vector<CpuRange> ranges;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "0,"

        const auto dash = item.find('-');
        const auto first = whole_number(item.substr(0, dash), 10);
        const auto last =
            dash == std::string_view::npos ? first : whole_number(item.substr(dash + 1), 10);
        if (!first || !last || *last < *first) return std::nullopt;
        ranges.push_back({*first, *last});
    }
    return ranges;
}

std::optional<std::array<unsigned char, trainrig::nvml::kGpuFabricUuidLen>> parse_uuid_bytes(
    std::string_view text) {
    std::string digits;
    for (char c : text)
        if (c != '-') digits += c;
    std::array<unsigned char, trainrig::nvml::kGpuFabricUuidLen> bytes{};
    if (digits.size() != 2 * bytes.size() || !all_hex(digits)) return std::nullopt;
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<unsigned char>(
            *whole_number(std::string_view(digits).substr(2 * i, 2), 16));
    return bytes;
}

}  // namespace fake_nvml

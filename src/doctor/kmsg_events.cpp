// Xid / fallen-off-the-bus / AER message scanners; see kmsg_events.h.
#include "doctor/kmsg_events.h"

#include "core/text.h"

namespace trainrig {

std::optional<XidEvent> parse_xid(std::string_view m) {
    constexpr std::string_view kTag = "NVRM: Xid (";
    auto pos = m.find(kTag);
    if (pos == std::string_view::npos) return std::nullopt;
    auto rest = m.substr(pos + kTag.size());
    auto close = rest.find("): ");
    if (close == std::string_view::npos || close == 0 || close > 32) return std::nullopt;
    auto gpu = rest.substr(0, close);
    if (gpu.starts_with("PCI:")) gpu.remove_prefix(4);
    rest = rest.substr(close + 3);
    size_t digits = 0;
    while (digits < rest.size() && digits < 6 && rest[digits] >= '0' && rest[digits] <= '9')
        ++digits;
    if (digits == 0 || (digits < rest.size() && rest[digits] != ',')) return std::nullopt;
    auto code = parse_i64(rest.substr(0, digits));
    if (!code) return std::nullopt;
    XidEvent e;
    e.gpu = std::string(gpu);
    e.code = static_cast<int>(*code);
    e.detail = std::string(trim(rest.substr(std::min(digits + 1, rest.size()))));
    return e;
}

std::optional<std::string> parse_fallen_off_bus(std::string_view m) {
    constexpr std::string_view kTag = "NVRM: GPU ";
    if (!contains(m, "fallen off the bus") || contains(m, "NVRM: Xid")) return std::nullopt;
    auto pos = m.find(kTag);
    if (pos == std::string_view::npos) return std::string("unknown");
    auto rest = m.substr(pos + kTag.size());
    auto colon = rest.find(": ");
    if (colon == std::string_view::npos || colon > 16) return std::string("unknown");
    return std::string(rest.substr(0, colon));
}

std::optional<AerEvent> parse_aer(std::string_view m) {
    constexpr std::string_view kTag = "PCIe Bus Error: severity=";
    auto pos = m.find(kTag);
    if (pos == std::string_view::npos) return std::nullopt;
    AerEvent e;
    // The message starts with "<driver> <address>: ".
    auto words = split_ws(m.substr(0, pos));
    if (words.size() >= 2 && words[1].ends_with(':'))
        e.device = std::string(words[1].substr(0, words[1].size() - 1));
    else
        e.device = "unknown";
    // drivers/pci/pcie/aer.c wrote "Corrected" / "Uncorrected (Non-Fatal)" / "Uncorrected
    // (Fatal)" and, since Linux 6.x, "Correctable" / "Uncorrectable (Non-Fatal)" / "... (Fatal)".
    auto sev = m.substr(pos + kTag.size());
    if (sev.starts_with("Corrected") || sev.starts_with("Correctable"))
        e.severity = AerSeverity::kCorrected;
    else if (sev.starts_with("Uncorrected (Non-Fatal)") ||
             sev.starts_with("Uncorrectable (Non-Fatal)"))
        e.severity = AerSeverity::kNonFatal;
    else if (sev.starts_with("Uncorrected (Fatal)") || sev.starts_with("Uncorrectable (Fatal)") ||
             sev.starts_with("Fatal"))
        e.severity = AerSeverity::kFatal;
    else
        return std::nullopt;
    return e;
}

}  // namespace trainrig

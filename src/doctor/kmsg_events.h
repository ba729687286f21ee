// Parsers for the kernel-log messages doctor counts: NVIDIA Xid reports, "fallen off the bus"
// and PCIe AER errors. Hand-written scanners rather than regexes: the formats are fixed, and
// these run over every record of a large log (and are fuzzed).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainrig {

// "NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has fallen off the bus."
// (older drivers omit "PCI:").
struct XidEvent {
    std::string gpu;  // "0000:41:00" as the driver prints it
    int code = 0;
    std::string detail;  // the text after the code
};
std::optional<XidEvent> parse_xid(std::string_view message);

// "NVRM: GPU 0000:41:00.0: GPU has fallen off the bus." -> "0000:41:00.0"
std::optional<std::string> parse_fallen_off_bus(std::string_view message);

enum class AerSeverity { kCorrected, kNonFatal, kFatal };
// "pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, ..."
// "nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer"
struct AerEvent {
    std::string device;  // the function that logged it
    AerSeverity severity = AerSeverity::kCorrected;
};
std::optional<AerEvent> parse_aer(std::string_view message);

}  // namespace trainrig

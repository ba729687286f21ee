#include "watch/alert_rule.h"

#include "nvml/nvml_api.h"

namespace trainrig::watch {
namespace {

constexpr FieldInfo kFields[] = {
    {Field::kUtilization, "utilization", "utilization", "", false, nullptr},
    {Field::kMemoryUtilization, "memory_utilization", "memory utilization", "", false, nullptr},
    {Field::kMemoryUsedRatio, "memory_used_ratio", "memory in use", "", false, nullptr},
    {Field::kTemperature, "temperature_celsius", "temperature", " °C", false, nullptr},
    {Field::kTemperatureVerdict, "temperature_verdict",
     "temperature verdict (1 near slowdown, 2 at it)", "", false, nullptr},
    {Field::kPower, "power_watts", "power draw", " W", false, nullptr},
    {Field::kPowerRatio, "power_ratio", "power draw / limit", "", false, nullptr},
    {Field::kSmClock, "sm_clock_hertz", "SM clock", " Hz", false, nullptr},
    {Field::kMemoryClock, "memory_clock_hertz", "memory clock", " Hz", false, nullptr},
    {Field::kThermalSlowdown, "thermal_slowdown", "thermal slowdown", "", false,
     "thermal slowdown is holding its clocks down to cool it"},
    {Field::kHwSlowdown, "hw_slowdown", "hardware slowdown or power brake", "", false,
     "hardware slowdown or power brake is holding its clocks down"},
    {Field::kPcieReplays, "pcie_replays", "PCIe replays", "", true, nullptr},
    {Field::kEccCorrected, "ecc_corrected", "corrected ECC errors", "", true, nullptr},
    {Field::kEccUncorrected, "ecc_uncorrected", "uncorrected ECC errors", "", true, nullptr},
    {Field::kRemappedRowsUncorrectable, "remapped_rows_uncorrectable",
     "rows remapped after uncorrectable errors", "", false, nullptr},
    {Field::kRemapPending, "remap_pending", "row remap pending", "", false,
     "a row remap is pending: it takes effect at the next GPU reset"},
    {Field::kRemapFailed, "remap_failed", "row remap failed", "", false,
     "a row remap failed: no spare row was left"},
    {Field::kNvlinksDown, "nvlinks_down", "NVLinks down", "", false, nullptr},
    {Field::kNvlinkVerdict, "nvlink_verdict",
     "NVLink verdict (1 a bridge link down, 2 a board link down)", "", false, nullptr},
    {Field::kEnergy, "energy_joules", "energy", " J", true, nullptr},
};

template <class T>
std::optional<double> num(const std::optional<T>& v) {
    if (!v) return std::nullopt;
    return static_cast<double>(*v);
}

}  // namespace

const FieldInfo& field_info(Field f) {
    for (const auto& i : kFields)
        if (i.field == f) return i;
    return kFields[0];
}

std::optional<Field> field_from_name(const std::string& name) {
    for (const auto& i : kFields)
        if (name == i.name) return i.field;
    return std::nullopt;
}

std::string field_names() {
    std::string out;
    for (const auto& i : kFields) out += (out.empty() ? "" : ", ") + std::string(i.name);
    return out;
}

bool settles_after_boot(Field f) { return f == Field::kNvlinksDown || f == Field::kNvlinkVerdict; }

std::optional<double> field_value(const GpuSample& s, Field f) {
    switch (f) {
        case Field::kUtilization:
            return s.utilization;
        case Field::kMemoryUtilization:
            return s.memory_utilization;
        case Field::kMemoryUsedRatio:
            if (!s.memory_used_bytes || !s.memory_total_bytes || *s.memory_total_bytes == 0)
                return std::nullopt;
            return static_cast<double>(*s.memory_used_bytes) /
                   static_cast<double>(*s.memory_total_bytes);
        case Field::kTemperature:
            return s.temperature_celsius;
        case Field::kTemperatureVerdict:
            if (!s.temperature_celsius) return std::nullopt;
            return static_cast<double>(
                policy::temperature_verdict(*s.temperature_celsius, s.temperature_slowdown_celsius,
                                            s.temperature_max_operating_celsius));
        case Field::kPower:
            return s.power_watts;
        case Field::kPowerRatio:
            if (!s.power_watts || !s.power_limit_watts || *s.power_limit_watts <= 0)
                return std::nullopt;
            return *s.power_watts / *s.power_limit_watts;
        case Field::kSmClock:
            return s.sm_clock_hertz;
        case Field::kMemoryClock:
            return s.memory_clock_hertz;
        case Field::kThermalSlowdown:
            if (!s.clock_event_reasons) return std::nullopt;
            return (*s.clock_event_reasons &
                    (nvml::kClocksEventSwThermalSlowdown | nvml::kClocksEventHwThermalSlowdown))
                       ? 1.0
                       : 0.0;
        case Field::kHwSlowdown:
            if (!s.clock_event_reasons) return std::nullopt;
            return (*s.clock_event_reasons &
                    (nvml::kClocksEventHwSlowdown | nvml::kClocksEventHwPowerBrakeSlowdown))
                       ? 1.0
                       : 0.0;
        case Field::kPcieReplays:
            return num(s.pcie_replays);
        case Field::kEccCorrected:
            return num(s.ecc_corrected);
        case Field::kEccUncorrected:
            return num(s.ecc_uncorrected);
        case Field::kRemappedRowsUncorrectable:
            return num(s.remapped_rows_uncorrectable);
        case Field::kRemapPending:
            return num(s.remap_pending);
        case Field::kRemapFailed:
            return num(s.remap_failed);
        case Field::kNvlinksDown:
            return num(s.nvlinks_down);
        case Field::kNvlinkVerdict:
            if (!s.nvlinks_up || !s.nvlinks_down || !s.nvlinks_expected) return std::nullopt;
            return static_cast<double>(policy::nvlink_verdict(
                *s.nvlinks_up, *s.nvlinks_down, *s.nvlinks_expected, s.nvlink_on_board));
        case Field::kEnergy:
            return s.energy_joules;
    }
    return std::nullopt;
}

std::optional<EventKind> event_from_name(const std::string& name) {
    if (name == "xid") return EventKind::kXid;
    if (name == "fallen_off_bus") return EventKind::kFallenOffBus;
    if (name == "aer_uncorrected") return EventKind::kAerUncorrected;
    if (name == "aer_fatal") return EventKind::kAerFatal;
    if (name == "aer_nonfatal") return EventKind::kAerNonFatal;
    if (name == "aer_corrected") return EventKind::kAerCorrected;
    if (name == "gpu_lost") return EventKind::kGpuLost;
    if (name == "gpu_hung") return EventKind::kGpuHung;
    return std::nullopt;
}

const char* severity_name(Severity s) {
    switch (s) {
        case Severity::kInfo:
            return "info";
        case Severity::kWarning:
            return "warning";
        case Severity::kCritical:
            return "critical";
    }
    return "warning";
}

}  // namespace trainrig::watch

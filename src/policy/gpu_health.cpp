// GPU health verdicts; see gpu_health.h.
#include "policy/gpu_health.h"

#include "nvml/nvml_api.h"

namespace trainrig::policy {

namespace {

constexpr ClockReason kReasons[] = {
    {nvml::kClocksEventGpuIdle, "idle", Verdict::kPass},
    {nvml::kClocksEventApplicationsClocksSetting, "applications clocks setting", Verdict::kPass},
    {nvml::kClocksEventSwPowerCap, "software power cap", Verdict::kPass},
    {nvml::kClocksEventHwSlowdown, "hardware slowdown", Verdict::kFail},
    {nvml::kClocksEventSyncBoost, "sync boost", Verdict::kPass},
    {nvml::kClocksEventSwThermalSlowdown, "software thermal slowdown", Verdict::kFail},
    {nvml::kClocksEventHwThermalSlowdown, "hardware thermal slowdown", Verdict::kFail},
    {nvml::kClocksEventHwPowerBrakeSlowdown, "hardware power brake", Verdict::kFail},
    {nvml::kClocksEventDisplayClockSetting, "display clock setting", Verdict::kPass},
};

}  // namespace

std::span<const ClockReason> clock_reasons() { return kReasons; }

uint64_t clock_reason_bits(Verdict v) {
    uint64_t bits = 0;
    for (const auto& r : kReasons)
        if (r.verdict == v) bits |= r.bit;
    return bits;
}

Verdict temperature_verdict(double celsius, std::optional<double> slowdown,
                            std::optional<double> max_operating) {
    if (slowdown && celsius >= *slowdown) return Verdict::kFail;
    if (slowdown && *slowdown - celsius < kTemperatureMarginC) return Verdict::kWarn;
    if (max_operating && celsius > *max_operating) return Verdict::kWarn;
    return Verdict::kPass;
}

}  // namespace trainrig::policy

// GPU health verdicts; see gpu_health.h.
#include "policy/gpu_health.h"

#include <fmt/format.h>

#include <algorithm>

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

Verdict temperature_verdict(double celsius, std::optional<double> slowdown,
                            std::optional<double> max_operating) {
    if (slowdown && celsius >= *slowdown) return Verdict::kFail;
    if (slowdown && *slowdown - celsius < kTemperatureMarginC) return Verdict::kWarn;
    if (max_operating && celsius > *max_operating) return Verdict::kWarn;
    return Verdict::kPass;
}

Verdict power_limit_verdict(double enforced_w, double default_w) {
    if (default_w > 0 && enforced_w < default_w * (1 - kPowerLimitSlack))
        return kPowerLimitBelowDefault;
    return Verdict::kPass;
}

Verdict pcie_link_verdict(double width, double width_max, double speed, double speed_max,
                          bool busy) {
    if (width < width_max) return Verdict::kFail;
    if (busy && speed < speed_max) return Verdict::kWarn;
    return Verdict::kPass;
}

double pcie_replay_limit_per_minute(std::optional<int64_t> gen_max,
                                    std::optional<int64_t> width_max) {
    static constexpr double kPerLane[] = {0.15, 0.3, 0.48, 0.96, 1.92, 3.84};
    const int64_t gen = std::clamp<int64_t>(gen_max.value_or(kAssumedPcieGen), 1, 6);
    return kPerLane[gen - 1] * static_cast<double>(width_max.value_or(kAssumedPcieWidth));
}

std::string pcie_link_name(std::optional<int64_t> gen_max, std::optional<int64_t> width_max) {
    return fmt::format("Gen{} x{}", gen_max.value_or(kAssumedPcieGen),
                       width_max.value_or(kAssumedPcieWidth));
}

Verdict nvlink_verdict(unsigned up, unsigned down, int expected, bool on_board) {
    const auto want = static_cast<unsigned>(std::max(expected, 0));
    if (on_board) return up < want ? Verdict::kFail : Verdict::kPass;
    if (want > 0) return up > 0 && up < want ? Verdict::kWarn : Verdict::kPass;
    return down > 0 && up > 0 ? Verdict::kWarn : Verdict::kPass;
}

}  // namespace trainrig::policy

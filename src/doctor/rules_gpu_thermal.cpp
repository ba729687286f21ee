// Heat and clocks: how close each GPU runs to its slowdown temperature, and whether the driver
// is holding its clocks down right now (and why). article §3.1 (the failed air conditioner),
// §5.2 (temperature watch).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"
#include "nvml/nvml_api.h"

namespace trainrig {

namespace {

// Below this margin to the slowdown temperature a GPU has no headroom left for load.
constexpr int64_t kMarginWarnC = 5;

void check_temperature(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0, with_threshold = 0;
    auto table = nlohmann::json::array();
    for (const auto* g : answering_gpus(*n)) {
        const int64_t* t = read.get(*g, g->temperature_c);
        if (!t) continue;
        ++judged;
        const int64_t* slow = g->temperature_slowdown_c.get();
        const int64_t* shut = g->temperature_shutdown_c.get();
        const int64_t* maxop = g->temperature_max_operating_c.get();
        with_threshold += slow != nullptr;
        table.push_back({{"gpu", g->index}, {"celsius", *t}, {"slowdown", slow ? *slow : -1}});
        f.evidence.push_back(
            fmt::format("{}: {} °C (max operating {}, slowdown {}, shutdown {})",
                        nvml_gpu_label(*g), *t, maxop ? std::to_string(*maxop) : "?",
                        slow ? std::to_string(*slow) : "?", shut ? std::to_string(*shut) : "?"));
        if (slow && *t >= *slow) {
            f.raise(FindingStatus::kFail,
                    fmt::format("GPU {} is at {} °C, at or over its slowdown temperature {} °C",
                                g->index, *t, *slow));
        } else if (slow && *slow - *t < kMarginWarnC) {
            f.raise(FindingStatus::kWarn, fmt::format("GPU {} is at {} °C, {} °C from slowdown",
                                                      g->index, *t, *slow - *t));
        } else if (maxop && *t > *maxop) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {} is at {} °C, above its maximum operating temperature "
                                "{} °C",
                                g->index, *t, *maxop));
        }
    }
    if (read.skip_if_none(judged, "the GPU temperature")) return;
    read.note_unsupported();
    f.data = {{"gpus", table}};
    if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn)
        f.remedy =
            "Check the room and the chassis before the jobs: inlet temperature, fans "
            "(`ipmitool sdr type Fan`), blanking panels, filters. A hot GPU at idle means "
            "cooling has failed; under load it throttles and slows every rank of a job.";
    f.raise(FindingStatus::kPass,
            with_threshold == judged
                ? fmt::format("{} GPU(s) at least {} °C below slowdown", judged, kMarginWarnC)
                : fmt::format("{} GPU(s) below their limits ({} without a slowdown threshold "
                              "from NVML)",
                              judged, judged - with_threshold));
}

struct Reason {
    uint64_t bit;
    const char* name;
    FindingStatus status;
};

constexpr Reason kReasons[] = {
    {nvml::kClocksEventGpuIdle, "idle", FindingStatus::kPass},
    {nvml::kClocksEventApplicationsClocksSetting, "applications clocks setting",
     FindingStatus::kPass},
    {nvml::kClocksEventSwPowerCap, "software power cap", FindingStatus::kWarn},
    {nvml::kClocksEventHwSlowdown, "hardware slowdown", FindingStatus::kFail},
    {nvml::kClocksEventSyncBoost, "sync boost", FindingStatus::kPass},
    {nvml::kClocksEventSwThermalSlowdown, "software thermal slowdown", FindingStatus::kFail},
    {nvml::kClocksEventHwThermalSlowdown, "hardware thermal slowdown", FindingStatus::kFail},
    {nvml::kClocksEventHwPowerBrakeSlowdown, "hardware power brake", FindingStatus::kFail},
    {nvml::kClocksEventDisplayClockSetting, "display clock setting", FindingStatus::kPass},
};

void check_clock_events(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0;
    bool power_cap = false;
    for (const auto* g : answering_gpus(*n)) {
        const uint64_t* mask = read.get(*g, g->clock_event_reasons);
        if (!mask) continue;
        ++judged;
        std::vector<std::string> names;
        uint64_t known = 0;
        for (const auto& r : kReasons) {
            known |= r.bit;
            if (!(*mask & r.bit)) continue;
            names.push_back(r.name);
            if (r.status == FindingStatus::kPass) continue;
            if (r.bit == nvml::kClocksEventSwPowerCap) power_cap = true;
            f.raise(r.status, fmt::format("GPU {}: {} holds the clocks down", g->index, r.name));
        }
        if (*mask & ~known) names.push_back(fmt::format("other 0x{:x}", *mask & ~known));
        std::string clocks;
        if (g->clocks.sm_mhz.is_known() && g->clocks.sm_max_mhz.is_known())
            clocks = fmt::format(", SM {} of {} MHz", g->clocks.sm_mhz.value(),
                                 g->clocks.sm_max_mhz.value());
        f.evidence.push_back(fmt::format("{}: 0x{:x} ({}){}", nvml_gpu_label(*g), *mask,
                                         names.empty() ? "none" : join(names, ", "), clocks));
    }
    if (read.skip_if_none(judged, "clock event reasons")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kFail)
        f.remedy =
            "Thermal: fix the cooling (gpu.temperature). Hardware slowdown or power brake: the "
            "board or the power supply asked for it: check PSU redundancy and cabling, and "
            "`nvidia-smi -q -d PERFORMANCE` while the job runs.";
    else if (power_cap)
        f.remedy =
            "At full load a GPU running at its power limit shows this: confirm the limit is the "
            "board's default (`nvidia-smi -q -d POWER`) and that nobody lowered it.";
    f.raise(FindingStatus::kPass,
            fmt::format("no thermal, power or hardware clock limits on {} GPU(s)", judged));
}

}  // namespace

std::vector<Rule> gpu_thermal_rules() {
    return {
        {"gpu.temperature",
         "GPU temperature with a margin to slowdown",
         {"training-machine article §3.1 (air conditioner failure), §5.2"},
         nvml_rule_skip,
         check_temperature},
        {"gpu.clock-events",
         "Nothing but idle holds the GPU clocks down",
         {"NVML nvmlClocksEventReasons", "training-machine article §3.1"},
         nvml_rule_skip,
         check_clock_events},
    };
}

}  // namespace trainrig

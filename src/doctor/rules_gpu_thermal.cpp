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

using policy::kTemperatureMarginC;
using policy::Verdict;

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
        auto as_double = [](const int64_t* v) {
            return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
        };
        const Verdict v =
            policy::temperature_verdict(static_cast<double>(*t), as_double(slow), as_double(maxop));
        if (v == Verdict::kFail)
            f.raise(status_of(v),
                    fmt::format("GPU {} is at {} °C, at or over its slowdown temperature {} °C",
                                g->index, *t, *slow));
        else if (v == Verdict::kWarn && slow &&
                 static_cast<double>(*slow - *t) < kTemperatureMarginC)
            f.raise(status_of(v), fmt::format("GPU {} is at {} °C, {} °C from slowdown", g->index,
                                              *t, *slow - *t));
        else if (v == Verdict::kWarn)
            f.raise(status_of(v),
                    fmt::format("GPU {} is at {} °C, above its maximum operating temperature "
                                "{} °C",
                                g->index, *t, *maxop));
    }
    if (read.skip_if_none(judged, "the GPU temperature")) return;
    read.note_unsupported();
    f.data = {{"gpus", table}};
    if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn)
        f.remedy =
            "Check the room and the chassis before the jobs: inlet temperature, fans "
            "(`ipmitool sdr type Fan`), blanking panels, filters. A hot GPU at idle means "
            "cooling has failed; under load it throttles and slows every rank of a job.";
    f.raise(
        FindingStatus::kPass,
        with_threshold == judged
            ? fmt::format("{} GPU(s) at least {} °C below slowdown", judged, kTemperatureMarginC)
            : fmt::format("{} GPU(s) below their limits ({} without a slowdown threshold "
                          "from NVML)",
                          judged, judged - with_threshold));
}

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
        for (const auto& r : policy::clock_reasons()) {
            known |= r.bit;
            if (!(*mask & r.bit)) continue;
            names.push_back(r.name);
            if (r.bit == nvml::kClocksEventSwPowerCap) power_cap = true;
            if (r.verdict == Verdict::kPass) continue;
            f.raise(status_of(r.verdict),
                    fmt::format("GPU {}: {} holds the clocks down", g->index, r.name));
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
    if (power_cap)
        f.evidence.push_back(
            "software power cap: the GPU runs at its power limit, as at full load; an idle GPU "
            "showing it has a lowered limit (`nvidia-smi -q -d POWER`)");
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

// The GPU's PCIe link as the driver sees it: generation and width against what the GPU and the
// slot can do, and the link's replay counter (retransmissions: a marginal slot, riser or cable).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"
#include "nvml/nvml_api.h"
#include "policy/gpu_health.h"

namespace trainrig {

namespace {

void check_pcie_link(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const int64_t* gen = read.get(*g, g->pcie.gen);
        const int64_t* gen_max = read.get(*g, g->pcie.gen_max);
        const int64_t* width = read.get(*g, g->pcie.width);
        const int64_t* width_max = read.get(*g, g->pcie.width_max);
        if (!gen || !gen_max || !width || !width_max) continue;
        ++judged;
        const int64_t* gpu_gen = g->pcie.gpu_gen_max.get();
        f.evidence.push_back(fmt::format(
            "{}: Gen{} x{} (can do Gen{} x{}{})", nvml_gpu_label(*g), *gen, *width, *gen_max,
            *width_max, gpu_gen ? fmt::format("; the GPU alone Gen{}", *gpu_gen) : std::string()));
        const auto verdict = policy::pcie_link_verdict(
            static_cast<double>(*width), static_cast<double>(*width_max), static_cast<double>(*gen),
            static_cast<double>(*gen_max), gpu_busy(*g));
        if (*width < *width_max)
            f.raise(status_of(verdict),
                    fmt::format("GPU {} runs at x{} of x{}: {} of its host bandwidth", g->index,
                                *width, *width_max, *width * 2 == *width_max ? "half" : "part"));
        else if (verdict != policy::Verdict::kPass)
            f.raise(status_of(verdict), fmt::format("GPU {} runs at Gen{} of Gen{} while busy",
                                                    g->index, *gen, *gen_max));
        if (gpu_gen && *gen_max < *gpu_gen)
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {} can do Gen{} but the slot allows Gen{}", g->index, *gpu_gen,
                                *gen_max));
    }
    if (read.skip_if_none(judged, "the PCIe link")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kWarn || f.status == FindingStatus::kFail)
        f.remedy =
            "Reseat the GPU (and its riser), check the slot's wiring in the board manual (an x16 "
            "slot wired x8) and the firmware's PCIe link settings; an idle GPU lowering its "
            "generation is normal, one under load is not.";
    f.raise(FindingStatus::kPass, fmt::format("{} GPU(s) at full PCIe width", judged));
}

void check_pcie_replay(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    if (!s.host.uptime_seconds.is_known() || s.host.uptime_seconds.value() < 60)
        return f.raise(FindingStatus::kSkip,
                       "the replay counter needs a time window: no uptime of a minute or more");
    // The counter runs since the driver loaded, at or after boot: dividing by the uptime gives
    // a rate no higher than the true one, so a rate over the limit is over it.
    const double minutes = s.host.uptime_seconds.value() / 60.0;
    GpuFieldReader read(f);
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const uint64_t* count = read.get(*g, g->pcie.replay_count);
        if (!count) continue;
        ++judged;
        const auto gen = g->pcie.gen_max.optional();
        const auto lanes = g->pcie.width_max.optional();
        const double limit = policy::pcie_replay_limit_per_minute(gen, lanes);
        const double rate = static_cast<double>(*count) / minutes;
        f.evidence.push_back(fmt::format(
            "{}: {} replays in {:.0f} min = {:.2f}/min (limit {:.2f}/min for {})",
            nvml_gpu_label(*g), *count, minutes, rate, limit, policy::pcie_link_name(gen, lanes)));
        if (rate > limit)
            f.raise(status_of(policy::kPcieReplaysOverLimit),
                    fmt::format("GPU {}: {:.1f} PCIe replays per minute, over the {:.2f} that a "
                                "healthy {} link allows",
                                g->index, rate, limit, policy::pcie_link_name(gen, lanes)));
    }
    if (read.skip_if_none(judged, "the PCIe replay counter")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kWarn)
        f.remedy =
            "Replays are retransmissions after link errors: reseat the GPU and its riser, look "
            "for AER lines (kmsg.pcie-aer), and move the GPU to another slot to tell a bad slot "
            "from a bad card.";
    f.raise(FindingStatus::kPass,
            fmt::format("PCIe replay rate within DCGM's limit on {} GPU(s)", judged));
}

}  // namespace

std::vector<Rule> gpu_pcie_rules() {
    return {
        {"gpu.pcie-link",
         "GPU PCIe link at the generation and width the GPU and slot support",
         {"training-machine article §2.3 (x16 per GPU), §5.1"},
         nvml_rule_skip,
         check_pcie_link},
        {"gpu.pcie-replay",
         "PCIe replay rate within DCGM's per-lane limit",
         {"NVIDIA DCGM health watch (PCIe replay rate)"},
         nvml_rule_skip,
         check_pcie_replay},
    };
}

}  // namespace trainrig

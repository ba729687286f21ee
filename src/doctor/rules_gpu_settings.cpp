// GPU settings an operator makes that change what a training job gets from the part: a power
// limit below the board's default, and MIG partitioning. Both may be meant; both warn and say
// what they cost (policy/gpu_health.h).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

// A snapshot written before a field existed does not have it: that is no fault of the machine.
template <class T>
bool unrecorded(const Fact<T>& fact, int gpu, std::vector<std::string>& notes) {
    if (!fact.is_absent()) return false;
    notes.push_back(
        fmt::format("GPU {}: not in this snapshot (written by an older trainrig)", gpu));
    return true;
}

// Notes the GPUs the snapshot has nothing on; true (the finding a skip) when no GPU was judged
// for that reason alone.
bool skipped_unrecorded(Finding& f, const std::vector<std::string>& notes, size_t judged,
                        std::string_view field) {
    for (const auto& n : notes) f.evidence.push_back(n);
    if (judged > 0 || notes.empty() || f.status == FindingStatus::kError) return false;
    f.raise(FindingStatus::kSkip, fmt::format("the snapshot does not record {}", field));
    return true;
}

void check_power_limit(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    std::vector<std::string> notes;
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        if (unrecorded(g->power_default_limit_w, g->index, notes)) continue;
        const double* def = read.get(*g, g->power_default_limit_w);
        const double* lim = def ? read.get(*g, g->power_limit_w) : nullptr;
        if (!def || !lim) continue;
        ++judged;
        f.evidence.push_back(
            fmt::format("{}: enforced {:.0f} W, default {:.0f} W", nvml_gpu_label(*g), *lim, *def));
        const auto v = policy::power_limit_verdict(*lim, *def);
        if (v != policy::Verdict::kPass)
            f.raise(status_of(v), fmt::format("GPU {} is limited to {:.0f} W, {:.1f} % of its "
                                              "default {:.0f} W",
                                              g->index, *lim, 100 * *lim / *def, *def));
    }
    if (skipped_unrecorded(f, notes, judged, "power limits")) return;
    if (read.skip_if_none(judged, "power limits")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kWarn)
        f.remedy =
            "Capped, the GPU runs its clocks down at full load and every benchmark falls short of "
            "the part's. If nobody meant it, restore the default: `nvidia-smi -i N -pl <default "
            "W>` (until reboot; a BMC's cap is set in the BMC). If the site means it, expect the "
            "benchmarks to say so.";
    f.raise(FindingStatus::kPass,
            fmt::format("{} GPU(s) run at their board's default power limit or above", judged));
}

void check_mig(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    std::vector<std::string> notes;
    size_t judged = 0;
    auto word = [](bool b) { return b ? "enabled" : "disabled"; };
    for (const auto* g : answering_gpus(*n)) {
        if (unrecorded(g->mig, g->index, notes)) continue;
        const MigMode* m = read.get(*g, g->mig);
        if (!m) continue;
        ++judged;
        f.evidence.push_back(fmt::format("{}: MIG {}, {} after a reset", nvml_gpu_label(*g),
                                         word(m->enabled), word(m->pending)));
        if (m->enabled)
            f.raise(status_of(policy::kMigEnabled),
                    fmt::format("MIG is on for GPU {}: CUDA sees its instances, not the GPU",
                                g->index));
        if (m->pending != m->enabled)
            f.raise(status_of(policy::kMigPending),
                    fmt::format("GPU {}'s MIG mode becomes {} at its next reset", g->index,
                                word(m->pending)));
    }
    if (skipped_unrecorded(f, notes, judged, "MIG modes")) return;
    if (read.skip_if_none(judged, "MIG mode")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kWarn)
        f.remedy =
            "A training job wants whole GPUs: no GPU-to-GPU traffic (NVLink or PCIe P2P) crosses "
            "MIG instances. With no process on the GPU, `nvidia-smi -i N -mig 0` turns MIG off "
            "(a pending change needs a GPU reset, `nvidia-smi -i N -r`, or a reboot).";
    f.raise(FindingStatus::kPass, fmt::format("MIG off on {} GPU(s) that have it", judged));
}

}  // namespace

std::vector<Rule> gpu_settings_rules() {
    return {
        {"gpu.power-limit",
         "Each GPU runs at its board's default power limit",
         {"NVML nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetPowerManagementDefaultLimit"},
         nvml_rule_skip,
         check_power_limit},
        {"gpu.mig",
         "GPUs are whole: MIG partitioning off",
         {"NVIDIA Multi-Instance GPU User Guide (Application Considerations)"},
         nvml_rule_skip,
         check_mig},
    };
}

}  // namespace trainrig

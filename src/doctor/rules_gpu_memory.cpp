// GPU memory health: ECC mode and uncorrectable errors, row remapping (Ampere and later), page
// retirement (before Ampere). article §5.1; Xid 48/63/64/94/95 in the Xid catalog.
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

void check_ecc(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0, enabled = 0;
    for (const auto* g : answering_gpus(*n)) {
        const bool* on = read.get(*g, g->ecc.enabled);
        if (!on) continue;
        ++judged;
        enabled += *on;
        const auto* model = gpu_model(*g);
        const bool datacenter = !model || model->datacenter;
        std::string line = fmt::format("{}: ECC {}", nvml_gpu_label(*g), *on ? "on" : "off");
        if (const bool* next = g->ecc.enabled_pending.get(); next && *next != *on) {
            line += fmt::format(", {} after the next reboot", *next ? "on" : "off");
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {}: the ECC mode changes at the next reboot", g->index));
        }
        // With ECC off the counters are not supported: the GPU is still judged (on the mode).
        const uint64_t* vol = g->ecc.volatile_uncorrected.get();
        if (g->ecc.volatile_uncorrected.is_failed() &&
            g->ecc.volatile_uncorrected.status().code() != Errc::kUnsupported)
            read.get(*g, g->ecc.volatile_uncorrected);  // an error: report it
        const uint64_t* agg = g->ecc.aggregate_uncorrected.get();
        if (vol) line += fmt::format(", uncorrectable since driver load {}", *vol);
        if (agg) line += fmt::format(", lifetime {}", *agg);
        if (const uint64_t* c = g->ecc.volatile_corrected.get())
            line += fmt::format(", corrected since driver load {}", *c);
        f.evidence.push_back(line);
        if (!*on && datacenter)
            f.raise(FindingStatus::kFail,
                    fmt::format("ECC is off on GPU {}: memory errors corrupt training silently",
                                g->index));
        if (vol && *vol > 0)
            f.raise(status_of(policy::kEccUncorrectedSinceLoad),
                    fmt::format("GPU {} had {} uncorrectable memory error(s) since the driver "
                                "loaded",
                                g->index, *vol));
        else if (agg && *agg > 0)
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {} has had {} uncorrectable memory error(s) in its life",
                                g->index, *agg));
    }
    if (read.skip_if_none(judged, "ECC")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn)
        f.remedy =
            "ECC off: `nvidia-smi -i N -e 1` and reboot. Uncorrectable errors: stop jobs on the "
            "GPU, reset it (`nvidia-smi -r -i N`) so pending rows are remapped, check "
            "gpu.remapped-rows and kmsg.xid (Xid 48/94/95), and RMA if errors return.";
    f.raise(FindingStatus::kPass,
            enabled == judged
                ? fmt::format("ECC on, no uncorrectable errors on {} GPU(s)", judged)
                : fmt::format("no uncorrectable errors on {} GPU(s); ECC on for {} (off is "
                              "the default on GeForce cards)",
                              judged, enabled));
}

void check_remapped_rows(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const RemappedRows* r = read.get(*g, g->remapped_rows);
        if (!r) continue;
        ++judged;
        f.evidence.push_back(fmt::format(
            "{}: rows remapped for correctable {}, uncorrectable {}; pending {}, failure {}",
            nvml_gpu_label(*g), r->correctable, r->uncorrectable, r->pending ? "yes" : "no",
            r->failure ? "yes" : "no"));
        if (r->failure)
            f.raise(status_of(policy::kRemapFailed),
                    fmt::format("GPU {}: a row remap failed (no spare row left)", g->index));
        if (r->pending)
            f.raise(status_of(policy::kRemapPending),
                    fmt::format("GPU {}: a row remap is pending until the GPU is reset", g->index));
        if (r->uncorrectable > 0)
            f.raise(status_of(policy::kRowsRemappedUncorrectable),
                    fmt::format("GPU {}: {} row(s) remapped after uncorrectable errors", g->index,
                                r->uncorrectable));
    }
    if (read.skip_if_none(judged, "row remapping")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kFail)
        f.remedy =
            "Pending: drain the GPU and reset it (`nvidia-smi -r -i N`, or reboot) so the remap "
            "takes effect. Failure: the GPU has run out of spare rows: RMA it (NVIDIA's GPU "
            "memory error management guide).";
    f.raise(FindingStatus::kPass,
            fmt::format("no pending or failed row remap on {} GPU(s)", judged));
}

void check_retired_pages(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const RetiredPages* p = read.get(*g, g->retired_pages);
        if (!p) continue;
        ++judged;
        const bool* pending = p->pending.get();
        f.evidence.push_back(
            fmt::format("{}: retired pages: multiple single-bit {}, double-bit "
                        "{}; pending {}",
                        nvml_gpu_label(*g), p->single_bit, p->double_bit,
                        pending ? (*pending ? "yes" : "no") : "?"));
        if (pending && *pending)
            f.raise(FindingStatus::kFail,
                    fmt::format("GPU {}: page retirement waits for a reboot", g->index));
        if (p->double_bit > 0)
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {}: {} page(s) retired after double-bit errors", g->index,
                                p->double_bit));
    }
    if (read.skip_if_none(judged, "page retirement (Ampere and later remap rows instead)")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn)
        f.remedy =
            "Reboot (or reset the GPU) so pending pages are retired; a GPU that keeps retiring "
            "pages is failing: RMA it.";
    f.raise(FindingStatus::kPass, fmt::format("no pending page retirement on {} GPU(s)", judged));
}

}  // namespace

std::vector<Rule> gpu_memory_rules() {
    return {
        {"gpu.ecc",
         "ECC on and no uncorrectable memory errors",
         {"training-machine article §5.1", "NVIDIA Xid catalog (48, 94, 95)"},
         nvml_rule_skip,
         check_ecc},
        {"gpu.remapped-rows",
         "No pending or failed row remapping",
         {"NVIDIA GPU Memory Error Management (row remapping)", "Xid 63, 64"},
         nvml_rule_skip,
         check_remapped_rows},
        {"gpu.retired-pages",
         "No pending page retirement",
         {"NVIDIA Dynamic Page Retirement documentation"},
         nvml_rule_skip,
         check_retired_pages},
    };
}

}  // namespace trainrig

// What the GPU rules share: when NVML facts are missing (skip, with the reason), how a GPU is
// named, and how a field NVML does not report on a GPU is kept apart from a real failure.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "doctor/rule.h"
#include "hw/nvidia_gpus.h"
#include "snapshot/snapshot.h"

namespace trainrig {

// The skip reason for a rule that judges NVML facts: no driver, not probed, or no GPU. nullopt
// when the facts are there, or when NVML failed (the rule then reports the error).
std::optional<std::string> nvml_skip_reason(const Snapshot& s);
// The same, in the shape of Rule::applies: every gpu.* rule uses it.
inline std::optional<std::string> nvml_rule_skip(const Snapshot& s, const RuleOptions&) {
    return nvml_skip_reason(s);
}

// Why no driver answers, when NVML's library is missing or its init says the driver is not
// loaded; nullopt when NVML was read, was not asked (a machine tree) or failed another way.
std::optional<std::string> driver_unreachable(const Snapshot& s);

// The NVML facts, or nullptr after marking the finding `error` with why they are missing.
const NvmlFacts* need_nvml(const Snapshot& s, Finding& f);

// "GPU 0 (0000:41:00.0, NVIDIA A100-SXM4-80GB)"
std::string nvml_gpu_label(const NvmlGpu& g);

// Whether the driver says the GPU is working: its clock event reasons are known and lack "GPU
// idle". Unknown counts as idle, so an idle GPU's lowered link speed is never judged.
bool gpu_busy(const NvmlGpu& g);
// The NVML GPU at a PCI address ("0000:41:00.0"), or nullptr.
const NvmlGpu* nvml_gpu_at(const Snapshot& s, std::string_view address);

// The catalog entry of a GPU by its PCI device id, nullptr when unknown.
const NvidiaGpuModel* gpu_model(const NvmlGpu& g);

// The GPUs still answering: not lost, and NVML gave a handle (gpu.count reports the others).
std::vector<const NvmlGpu*> answering_gpus(const NvmlFacts& n);

// Collects per-GPU field states across a rule: a known value is returned; a field NVML does not
// report on that GPU is remembered for the skip line; any other failure raises `error` with the
// GPU named.
class GpuFieldReader {
public:
    explicit GpuFieldReader(Finding& f) : f_(f) {}

    template <class T>
    const T* get(const NvmlGpu& g, const Fact<T>& fact) {
        seen_.insert(g.index);
        if (fact.is_known()) return &fact.value();
        if (fact.is_failed() && fact.status().code() == Errc::kUnsupported) {
            unsupported_gpus_.insert(g.index);
            unsupported_.push_back(fmt::format("GPU {}: {}", g.index, fact.status().message()));
            return nullptr;
        }
        const std::string why =
            fact.is_failed() ? fact.status().message() : std::string("not in the snapshot");
        f_.raise(FindingStatus::kError, fmt::format("{}: {}", nvml_gpu_label(g), why));
        f_.evidence.push_back(fmt::format("{}: {}", nvml_gpu_label(g), why));
        return nullptr;
    }

    // True when nothing was judged because no GPU reports the field: the finding is then `skip`
    // with the reason, and the caller returns.
    bool skip_if_none(size_t judged, std::string_view field) {
        if (judged > 0 || f_.status == FindingStatus::kError) return false;
        if (seen_.empty()) {
            f_.raise(FindingStatus::kSkip, "no GPU answers NVML (see gpu.count)");
            return true;
        }
        f_.raise(FindingStatus::kSkip,
                 fmt::format("NVML does not report {} on {}", field,
                             unsupported_gpus_.size() == 1 ? "this GPU" : "these GPUs"));
        for (const auto& u : unsupported_) f_.evidence.push_back(u);
        return true;
    }

    // Evidence lines for GPUs that lack the field, when others were judged.
    void note_unsupported() {
        for (const auto& u : unsupported_) f_.evidence.push_back(u + " (not judged)");
    }

private:
    Finding& f_;
    std::set<int> seen_;
    std::set<int> unsupported_gpus_;
    std::vector<std::string> unsupported_;
};

}  // namespace trainrig

// What the GPU rules share beyond hw/snapshot_gpus.h: the skip in the shape of a rule, the
// error when NVML facts are missing, and how a field NVML does not report on a GPU is kept apart
// from a real failure.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "doctor/rule.h"
#include "hw/snapshot_gpus.h"
#include "snapshot/snapshot.h"

namespace trainrig {

// nvml_skip_reason (hw/snapshot_gpus.h) in the shape of Rule::applies: every gpu.* rule uses it.
inline std::optional<std::string> nvml_rule_skip(const Snapshot& s, const RuleOptions&) {
    return nvml_skip_reason(s);
}

// The NVML facts, or nullptr after marking the finding `error` with why they are missing.
const NvmlFacts* need_nvml(const Snapshot& s, Finding& f);

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

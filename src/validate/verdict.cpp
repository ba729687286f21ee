#include "validate/verdict.h"

#include <fmt/format.h>

#include "core/text.h"

namespace trainrig::validate {

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::kReady:
            return "READY";
        case Verdict::kReadyWithWarnings:
            return "READY WITH WARNINGS";
        case Verdict::kNotReady:
            return "NOT READY";
        case Verdict::kUnknown:
            return "UNKNOWN";
    }
    return "UNKNOWN";
}

int verdict_exit_code(Verdict v) {
    return v == Verdict::kNotReady ? 1 : v == Verdict::kUnknown ? 2 : 0;
}

const char* level_name(Level l) {
    return l == Level::kFail ? "fail" : l == Level::kWarn ? "warn" : "unknown";
}

const char* stage_state_name(StageState s) {
    switch (s) {
        case StageState::kRan:
            return "ran";
        case StageState::kSkipped:
            return "skipped";
        case StageState::kCouldNotRun:
            return "could not run";
        case StageState::kInterrupted:
            return "interrupted";
    }
    return "could not run";
}

const char* scope_name(Scope s) {
    switch (s) {
        case Scope::kGpu:
            return "gpu";
        case Scope::kHost:
            return "host";
        case Scope::kTree:
            return "tree";
        case Scope::kEmulated:
            return "emulated";
    }
    return "gpu";
}

Outcome judge(const std::vector<StageRecord>& stages, const std::vector<Item>& items, Scope scope,
              bool incomplete, const std::string& uncovered) {
    size_t fail = 0, warn = 0, unknown = 0;
    for (const auto& i : items)
        (i.level == Level::kFail ? fail : i.level == Level::kWarn ? warn : unknown) += 1;
    std::vector<std::string> missing;  // required stages that did not run
    for (const auto& s : stages)
        if (s.required &&
            (s.state == StageState::kCouldNotRun || s.state == StageState::kInterrupted))
            missing.push_back(s.name);
    Outcome o;
    // An interrupted run is never a reason to act: not even a failure it found makes it NOT
    // READY (a health check drains on that), since what did not run might have explained it.
    o.verdict = incomplete                                                 ? Verdict::kUnknown
                : fail                                                     ? Verdict::kNotReady
                : unknown || !missing.empty() || scope == Scope::kEmulated ? Verdict::kUnknown
                : warn || !uncovered.empty() ? Verdict::kReadyWithWarnings
                                             : Verdict::kReady;
    std::vector<std::string> counts;
    if (fail) counts.push_back(fmt::format("{} failed", fail));
    if (warn) counts.push_back(fmt::format("{} warning{}", warn, warn == 1 ? "" : "s"));
    if (unknown) counts.push_back(fmt::format("{} could not be judged", unknown));
    if (!missing.empty()) counts.push_back("did not run: " + join(missing, ", "));
    if (!uncovered.empty()) counts.push_back(uncovered);
    o.line = std::string(incomplete ? "INCOMPLETE, " : "") + verdict_name(o.verdict);
    if (!counts.empty()) o.line += ": " + join(counts, ", ");
    if (scope == Scope::kHost) o.line += " (no GPU: host checks only)";
    if (scope == Scope::kTree) o.line += " (machine tree: configuration only)";
    if (scope == Scope::kEmulated)
        o.line += " (emulated GPU: the GPU stages ran on the CPU, nothing was measured on a GPU)";
    return o;
}

}  // namespace trainrig::validate

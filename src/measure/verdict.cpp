#include "measure/verdict.h"

#include <fmt/format.h>

namespace trainrig::bench {

Status validate_thresholds(const Thresholds& t) {
    if (!(t.warn > 0 && t.warn <= t.pass))
        return Status{Errc::kInvalidInput,
                      fmt::format("--warn-ratio {} and --pass-ratio {} must satisfy 0 < warn <= "
                                  "pass",
                                  t.warn, t.pass)};
    return Status{};
}

std::optional<double> ratio(const BenchRecord& r) {
    if (!r.expected || !(*r.expected > 0) || r.samples.empty()) return std::nullopt;
    return r.median() / *r.expected;
}

Verdict judge(const BenchRecord& r, const Thresholds& t) {
    if (r.partial) return Verdict::kIncomplete;
    if (r.verified && !*r.verified) return Verdict::kFail;
    if (r.samples.empty()) return Verdict::kFail;  // nothing was measured
    const auto q = ratio(r);
    if (!q) return Verdict::kInfo;
    if (*q >= (r.expected_floor ? 1.0 : t.pass)) return Verdict::kPass;
    if (*q >= t.warn) return Verdict::kWarn;
    return Verdict::kFail;
}

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::kPass:
            return "pass";
        case Verdict::kWarn:
            return "warn";
        case Verdict::kFail:
            return "fail";
        case Verdict::kInfo:
            return "info";
        case Verdict::kIncomplete:
            return "incomplete";
    }
    return "info";
}

}  // namespace trainrig::bench

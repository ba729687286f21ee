#include "plan/derivation.h"

#include <fmt/format.h>

#include <cmath>

namespace trainrig::plan {

namespace {

// Three significant digits without an exponent: 2950, 12.3, 0.456.
std::string three(double v) {
    return std::fabs(v) >= 999.5 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

std::string si(double v, std::string_view unit) {
    static constexpr const char* kPrefixes[] = {"",  "k", "M", "G", "T", "P",
                                                "E", "Z", "Y", "R", "Q"};
    size_t i = 0;
    double m = v;
    while (std::fabs(m) >= 999.5 && i + 1 < std::size(kPrefixes)) {
        m /= 1000;
        ++i;
    }
    const std::string mantissa = fmt::format("{:.3g}", m);
    if (unit.empty()) return mantissa + kPrefixes[i];
    return fmt::format("{} {}{}", mantissa, kPrefixes[i], unit);
}

std::string num(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e6) return fmt::format("{:.0f}", v);
    if (std::fabs(v) >= 1e6) return si(v);
    if (std::fabs(v) < 1e-3 && v != 0) return fmt::format("{:.3g}", v);
    if (std::fabs(v) >= 999.5) return fmt::format("{:.0f}", v);
    return fmt::format("{:.4g}", v);
}

std::string gb(double bytes) { return three(bytes / 1e9) + " GB"; }

std::string billions(double params) {
    if (params >= 1e9) return fmt::format("{:.2f}B", params / 1e9);
    return fmt::format("{:.1f}M", params / 1e6);
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace trainrig::plan

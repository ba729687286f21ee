#include "plan/derivation.h"

#include <fmt/format.h>

#include <cmath>

namespace trainrig::plan {

std::string num(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e6) return fmt::format("{:.0f}", v);
    if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-3 && v != 0)) return fmt::format("{:.3g}", v);
    return fmt::format("{:.4g}", v);
}

std::string grouped(int64_t v) {
    std::string digits = std::to_string(v < 0 ? -v : v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

std::string gb(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

std::string seconds(double s) {
    if (s == 0) return "0 s";
    if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
    if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
    if (s < 120) return fmt::format("{:.3g} s", s);
    if (s < 7200) return fmt::format("{:.3g} min", s / 60);
    if (s < 3 * 86400) return fmt::format("{:.3g} h", s / 3600);
    return fmt::format("{:.3g} d", s / 86400);
}

std::string rate(double bytes_per_s) { return fmt::format("{:.3g} GB/s", bytes_per_s / 1e9); }

}  // namespace trainrig::plan

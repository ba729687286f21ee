#include "core/quantity.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace trainrig {

namespace {

struct Prefix {
    double scale;
    const char* name;
};

// The largest prefix that keeps the rounded figure at or above 1 (decimal steps of 1000).
std::string with_prefix(double v, const Prefix* prefixes, size_t n, std::string_view unit,
                        std::string_view space) {
    const double a = std::fabs(v);
    size_t k = 0;
    for (size_t i = 1; i < n; ++i)
        if (a >= prefixes[i].scale * 0.9995) k = i;
    return fmt::format("{}{}{}{}", sig3(v / prefixes[k].scale), space, prefixes[k].name, unit);
}

constexpr Prefix kDecimal[] = {{1, ""},     {1e3, "k"},  {1e6, "M"}, {1e9, "G"},
                               {1e12, "T"}, {1e15, "P"}, {1e18, "E"}};

}  // namespace

std::string sig3(double v) {
    if (!std::isfinite(v)) return fmt::format("{}", v);
    const double a = std::fabs(v);
    const int decimals = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
    return fmt::format("{:.{}f}", v, decimals);
}

std::string format_bytes(double bytes) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!std::isfinite(bytes)) return fmt::format("{} B", bytes);
    double v = bytes;
    int u = 0;
    while (std::fabs(v) >= 1023.5 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0) return fmt::format("{:.0f} B", v);
    return fmt::format("{} {}", sig3(v), kUnits[u]);
}

std::string format_rate(double bytes_per_second) {
    static constexpr Prefix kRate[] = {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}};
    return with_prefix(bytes_per_second, kRate, std::size(kRate), "B/s", " ");
}

std::string format_flops(double flop_per_second) {
    return with_prefix(flop_per_second, kDecimal, std::size(kDecimal), "FLOP/s", " ");
}

std::string format_duration(double s) {
    if (!std::isfinite(s)) return fmt::format("{} s", s);
    if (s == 0) return "0 s";
    const double a = std::fabs(s);
    constexpr double kMinute = 60, kHour = 3600, kDay = 86400, kYear = 365.25 * kDay;
    if (a >= 1000 * kYear) return "more than 1000 years";
    if (a >= kYear) return sig3(s / kYear) + " years";
    if (a >= kDay) return sig3(s / kDay) + " d";
    if (a >= kHour) return sig3(s / kHour) + " h";
    if (a >= 99.95) return sig3(s / kMinute) + " min";
    if (a >= 0.9995) return sig3(s) + " s";
    if (a >= 0.9995e-3) return sig3(s * 1e3) + " ms";
    if (a >= 0.9995e-6) return sig3(s * 1e6) + " µs";
    return sig3(s * 1e9) + " ns";
}

std::string format_energy(double joules) {
    static constexpr Prefix kWh[] = {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}};
    return with_prefix(joules / 3600.0, kWh, std::size(kWh), "Wh", " ");
}

std::string format_count(double n) {
    if (!std::isfinite(n)) return fmt::format("{}", n);
    const bool negative = n < 0;
    std::string digits = fmt::format("{:.0f}", std::fabs(n));
    for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
        digits.insert(static_cast<size_t>(at), 1, ',');
    return (negative ? "-" : "") + digits;
}

std::string format_scaled(double value, std::string_view unit) {
    const std::string space = unit.empty() ? "" : " ";
    const double a = std::fabs(value);
    size_t k = 0;
    for (size_t i = 1; i < std::size(kDecimal); ++i)
        if (a >= kDecimal[i].scale * 0.9995) k = i;
    return fmt::format("{}{}{}{}", sig3(value / kDecimal[k].scale), kDecimal[k].name, space, unit);
}

std::string plural(uint64_t n, std::string_view word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string format_quantity(double value, std::string_view unit) {
    if (unit == "bytes") return format_bytes(value);
    if (unit == "bytes/s") return format_rate(value);
    if (unit == "FLOP/s") return format_flops(value);
    if (unit == "s") return format_duration(value);
    if (unit == "fraction") return sig3(100 * value) + " %";
    if (unit == "J") return format_energy(value);
    return format_scaled(value, unit);
}

}  // namespace trainrig

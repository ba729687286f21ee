#include "plan/quantities.h"

#include <cctype>
#include <cmath>
#include <string>

#include "core/text.h"

namespace trainrig::plan {

namespace {

// Splits "1.5B" into 1.5 and 'B'; the suffix is 0 when absent.
std::optional<std::pair<double, char>> number_and_suffix(std::string_view text) {
    text = trim(text);
    if (text.empty()) return std::nullopt;
    char suffix = 0;
    if (std::isalpha(static_cast<unsigned char>(text.back())) && text.back() != 'e' &&
        text.back() != 'E') {
        suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
        text.remove_suffix(1);
    }
    auto v = parse_double(text);
    if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
    return std::pair{*v, suffix};
}

}  // namespace

std::optional<double> parse_count(std::string_view text) {
    auto ns = number_and_suffix(text);
    if (!ns) return std::nullopt;
    switch (ns->second) {
        case 0:
            return ns->first;
        case 'K':
            return ns->first * 1e3;
        case 'M':
            return ns->first * 1e6;
        case 'B':
        case 'G':
            return ns->first * 1e9;
        case 'T':
            return ns->first * 1e12;
        default:
            return std::nullopt;
    }
}

std::optional<double> parse_duration(std::string_view text) {
    auto ns = number_and_suffix(text);
    if (!ns) return std::nullopt;
    switch (ns->second) {
        case 'S':
            return ns->first;
        case 'M':
            return ns->first * 60;
        case 0:
        case 'H':
            return ns->first * 3600;
        case 'D':
            return ns->first * 86400;
        case 'W':
            return ns->first * 7 * 86400;
        default:
            return std::nullopt;
    }
}

}  // namespace trainrig::plan

// The quantities people type: "2B" tokens, "300M", "1.5e12"; "72h", "3d", "90m" deadlines.
#pragma once

#include <optional>
#include <string_view>

namespace trainrig::plan {

// A non-negative count with an optional K, M, B (or G) or T suffix (powers of 1000).
std::optional<double> parse_count(std::string_view text);
// A duration in seconds: a number with s, m (minutes), h, d or w; a bare number is hours.
std::optional<double> parse_duration(std::string_view text);

}  // namespace trainrig::plan

// Small, strict text helpers for kernel files: trimming, splitting, integer parsing that rejects
// trailing garbage, and UTF-8 repair so every string we keep can be written as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainrig {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
// Splits on runs of spaces and tabs, dropping empty fields.
std::vector<std::string_view> split_ws(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool contains(std::string_view s, std::string_view needle);
// ASCII letters in lower case; other bytes unchanged.
std::string to_lower(std::string_view s);

// Whole-string parses: surrounding whitespace allowed, anything else is a failure.
std::optional<int64_t> parse_i64(std::string_view s);
std::optional<uint64_t> parse_u64(std::string_view s);
// Accepts an optional 0x/0X prefix.
std::optional<uint64_t> parse_hex(std::string_view s);
std::optional<double> parse_double(std::string_view s);
// A period as rules files and options write it: "30s", "10m", "72h", "7d", or a bare number of
// seconds. Nothing for anything else or a negative value.
std::optional<double> parse_period(std::string_view text);

// Replaces invalid UTF-8 sequences and NUL bytes by U+FFFD; control characters other than
// tab and newline become '?' so a hostile file cannot move a terminal's cursor.
std::string sanitize_text(std::string_view s);

// Printable one-line preview of arbitrary bytes for error messages (at most `max` chars).
std::string preview(std::string_view s, size_t max = 40);

std::string join(const std::vector<std::string>& parts, std::string_view sep);

// A word a POSIX shell reads back as exactly `w`: as it is when plain, else single-quoted.
std::string shell_quote(std::string_view w);
// argv as one shell command line, each word quoted as shell_quote does.
std::string shell_command(const std::vector<std::string>& argv);

// Parses a kernel CPU list ("0-15,32-47") into sorted CPU numbers.
std::optional<std::vector<int>> parse_cpulist(std::string_view s);
// The inverse: sorted CPU numbers as "0-15,32-47".
std::string format_cpulist(const std::vector<int>& cpus);

}  // namespace trainrig

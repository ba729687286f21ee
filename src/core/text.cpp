// Strict text helpers; see text.h.
#include "core/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace trainrig {

std::string_view trim(std::string_view s) {
    const char* ws = " \t\n\r\f\v";
    auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (true) {
        auto pos = s.find(sep, start);
        if (pos == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
bool contains(std::string_view s, std::string_view needle) {
    return s.find(needle) != std::string_view::npos;
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

template <class T>
static std::optional<T> parse_integral(std::string_view s, int base) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    T v{};
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<int64_t> parse_i64(std::string_view s) { return parse_integral<int64_t>(s, 10); }
std::optional<uint64_t> parse_u64(std::string_view s) { return parse_integral<uint64_t>(s, 10); }

std::optional<uint64_t> parse_hex(std::string_view s) {
    s = trim(s);
    if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
    if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
    return parse_integral<uint64_t>(s, 16);
}

std::optional<double> parse_double(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    double v{};
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string sanitize_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    const auto n = s.size();
    while (i < n) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c == 0) {
                out += "\xEF\xBF\xBD";
            } else if (c < 0x20 && c != '\t' && c != '\n') {
                out += '?';
            } else if (c == 0x7f) {
                out += '?';
            } else {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        // Length and minimum code point of the sequence starting here (RFC 3629).
        int len = 0;
        uint32_t cp = 0, min = 0;
        if ((c & 0xE0) == 0xC0)
            len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            len = 4, cp = c & 0x07, min = 0x10000;
        bool valid = len > 0 && i + len <= n;
        for (int k = 1; valid && k < len; ++k) {
            auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) valid = false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (valid && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) valid = false;
        if (valid) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

std::string preview(std::string_view s, size_t max) {
    std::string clean = sanitize_text(s.substr(0, max * 4));
    for (char& c : clean)
        if (c == '\n' || c == '\t') c = ' ';
    if (clean.size() > max) {
        size_t cut = max;  // back up to a character boundary: never split a UTF-8 sequence
        while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) --cut;
        clean = clean.substr(0, cut) + "...";
    }
    return "'" + clean + "'";
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

std::optional<std::vector<int>> parse_cpulist(std::string_view s) {
    std::vector<int> cpus;
    s = trim(s);
    if (s.empty()) return cpus;
    for (auto part : split(s, ',')) {
        auto dash = part.find('-');
        if (dash == std::string_view::npos) {
            auto v = parse_i64(part);
            if (!v || *v < 0 || *v > 1 << 20) return std::nullopt;
            cpus.push_back(static_cast<int>(*v));
            continue;
        }
        auto a = parse_i64(part.substr(0, dash));
        auto b = parse_i64(part.substr(dash + 1));
        if (!a || !b || *a < 0 || *b < *a || *b > 1 << 20 || *b - *a > 1 << 16) return std::nullopt;
        for (auto c = *a; c <= *b; ++c) cpus.push_back(static_cast<int>(c));
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::string format_cpulist(const std::vector<int>& cpus) {
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += "-" + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace trainrig

namespace trainrig {

std::string shell_quote(std::string_view w) {
    const bool plain = !w.empty() && w.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_.,:/=+@%^-") == std::string_view::npos;
    if (plain) return std::string(w);
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& w : argv) out += (out.empty() ? "" : " ") + shell_quote(w);
    return out;
}

std::optional<double> parse_period(std::string_view text) {
    if (text.empty()) return std::nullopt;
    const char unit = text.back();
    const double scale = unit == 's'   ? 1
                         : unit == 'm' ? 60
                         : unit == 'h' ? 3600
                         : unit == 'd' ? 86400
                                       : 0;
    auto v = parse_double(scale > 0 ? text.substr(0, text.size() - 1) : text);
    if (!v || *v < 0 || !std::isfinite(*v)) return std::nullopt;
    return *v * (scale > 0 ? scale : 1);
}

}  // namespace trainrig

#include "watch/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace trainrig::watch {

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = std::string(name);
    // HELP text escapes backslash and newline only.
    std::string h;
    for (char c : help) {
        if (c == '\\')
            h += "\\\\";
        else if (c == '\n')
            h += "\\n";
        else
            h += c;
    }
    header_ = fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, h, name, type);
}

void PrometheusText::flush_header() {
    out_ += header_;
    header_.clear();
}

std::string PrometheusText::escape_label(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string PrometheusText::number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    // Integers as integers (counters stay exact up to 2^53); others in the shortest form that
    // reads back as the same double.
    if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return fmt::format("{:.0f}", v);
    return fmt::format("{}", v);
}

void PrometheusText::sample(const Labels& labels, double value) {
    if (!header_.empty()) flush_header();
    out_ += name_;
    if (!labels.empty()) {
        out_ += '{';
        bool first = true;
        for (const auto& [k, v] : labels) {
            if (!first) out_ += ',';
            first = false;
            out_ += k;
            out_ += "=\"";
            out_ += escape_label(v);
            out_ += '"';
        }
        out_ += '}';
    }
    out_ += ' ';
    out_ += number(value);
    out_ += '\n';
}

std::string PrometheusText::str() { return std::move(out_); }

}  // namespace trainrig::watch

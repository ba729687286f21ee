// Writing the Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
// exposition_formats): a HELP and a TYPE line per family, then its samples; label values
// escaped (backslash, double quote, newline); floats as Go's ParseFloat reads them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainrig::watch {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

class PrometheusText {
public:
    // Starts a family; `type` is gauge or counter. A family with no samples is left out whole.
    void family(std::string_view name, std::string_view type, std::string_view help);
    void sample(const Labels& labels, double value);
    std::string str();

    static std::string escape_label(std::string_view value);
    static std::string number(double value);

private:
    void flush_header();
    std::string out_;
    std::string name_, header_;
};

}  // namespace trainrig::watch

// Every number `plan` prints is a Step: what it is, the formula, the formula with this job's
// numbers substituted, the value, and where the formula comes from. `--explain` prints them in
// the order they were derived; JSON carries them under "derivation".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainrig::plan {

struct Step {
    std::string id;           // "memory.activations" — the JSON path of the value it explains
    std::string what;         // "activations per GPU"
    std::string formula;      // "L/pp x act_layer x in_flight + logits"
    std::string substituted;  // "40 x 1.07 GB x 1 + 2.1 GB"
    double value = 0;
    std::string unit;    // "bytes", "FLOP", "s", "params", "B/s"
    std::string source;  // "Korthikanti et al. 2022 (arXiv:2205.05198) §4"
};

class Derivation {
public:
    double add(std::string id, std::string what, std::string formula, std::string substituted,
               double value, std::string unit, std::string source) {
        steps_.push_back({std::move(id), std::move(what), std::move(formula),
                          std::move(substituted), value, std::move(unit), std::move(source)});
        return value;
    }
    const std::vector<Step>& steps() const { return steps_; }

private:
    std::vector<Step> steps_;
};

// Short human forms for substituted formulas: "6.74e9", "4096", "1.07 GB" (durations, rates and
// counts are core/quantity.h's, as everywhere).
std::string num(double v);
// Engineering units, never 1.2e+19: "444 GFLOP" with a unit, "10.9P" without.
std::string si(double v, std::string_view unit = "");
std::string gb(double bytes);         // decimal GB, 3 significant digits
std::string billions(double params);  // parameter counts as papers write them: "13.02B", "124.4M"
std::string gib(double bytes);        // binary GiB

}  // namespace trainrig::plan

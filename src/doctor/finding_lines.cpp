#include "doctor/finding_lines.h"

#include <fmt/format.h>

#include "doctor/report.h"

namespace trainrig {

Color finding_color(FindingStatus s) {
    switch (s) {
        case FindingStatus::kPass:
            return Color::kGreen;
        case FindingStatus::kWarn:
            return Color::kYellow;
        case FindingStatus::kFail:
        case FindingStatus::kError:
            return Color::kRed;
        case FindingStatus::kSkip:
            return Color::kGrey;
    }
    return Color::kNone;
}

std::string finding_word(FindingStatus s) {
    std::string w(status_name(s));
    for (char& c : w) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return w;
}

std::string finding_details(const Finding& f, bool color) {
    std::string out;
    for (const auto& e : f.evidence)
        out += fmt::format("        {} {}\n", colorize("·", Color::kGrey, color), e);
    if (!f.remedy.empty())
        out += fmt::format("        {} {}\n", colorize("fix:", Color::kBlue, color), f.remedy);
    return out;
}

std::string findings_footer(const std::vector<Finding>& findings, bool verbose) {
    auto c = count_by_status(findings);
    std::string out =
        fmt::format("\n{} pass, {} warn, {} fail, {} skip, {} error", c[FindingStatus::kPass],
                    c[FindingStatus::kWarn], c[FindingStatus::kFail], c[FindingStatus::kSkip],
                    c[FindingStatus::kError]);
    if (!verbose &&
        (c[FindingStatus::kWarn] || c[FindingStatus::kFail] || c[FindingStatus::kError]))
        out += " (-v shows evidence and fixes)";
    return out + "\n";
}

}  // namespace trainrig

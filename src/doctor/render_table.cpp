// Terminal rendering of a doctor report: grouped by area, one line per finding; -v adds the
// evidence and the remedy under each.
#include <fmt/format.h>

#include "core/terminal.h"
#include "doctor/report.h"

namespace trainrig {

namespace {

Color status_color(FindingStatus s) {
    switch (s) {
        case FindingStatus::kPass:
            return Color::kGreen;
        case FindingStatus::kWarn:
            return Color::kYellow;
        case FindingStatus::kFail:
            return Color::kRed;
        case FindingStatus::kError:
            return Color::kRed;
        case FindingStatus::kSkip:
            return Color::kGrey;
    }
    return Color::kNone;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return out;
}

}  // namespace

std::string render_table(const DoctorReport& r, bool verbose, bool color) {
    std::string out = colorize(fmt::format("trainrig doctor: {} — {}", r.hostname, r.source),
                               Color::kBold, color);
    out += "\n";
    size_t width = 0;
    for (const auto& f : r.findings) width = std::max(width, f.id.size());
    std::string area;
    for (const auto& f : r.findings) {
        if (f.area() != area) {
            area = f.area();
            out += "\n" + colorize(area, Color::kBold, color) + "\n";
        }
        auto word = fmt::format("{:<5}", upper(status_name(f.status)));
        out += fmt::format("  {} {:<{}}  {}\n", colorize(word, status_color(f.status), color), f.id,
                           width, f.summary);
        if (!verbose) continue;
        for (const auto& e : f.evidence)
            out += fmt::format("        {} {}\n", colorize("·", Color::kGrey, color), e);
        if (!f.remedy.empty())
            out += fmt::format("        {} {}\n", colorize("fix:", Color::kBlue, color), f.remedy);
    }
    auto c = count_by_status(r.findings);
    out += fmt::format("\n{} pass, {} warn, {} fail, {} skip, {} error", c[FindingStatus::kPass],
                       c[FindingStatus::kWarn], c[FindingStatus::kFail], c[FindingStatus::kSkip],
                       c[FindingStatus::kError]);
    if (!verbose &&
        (c[FindingStatus::kWarn] || c[FindingStatus::kFail] || c[FindingStatus::kError]))
        out += " (-v shows evidence and fixes)";
    out += "\n";
    return out;
}

}  // namespace trainrig

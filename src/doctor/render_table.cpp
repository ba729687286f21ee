#include "doctor/render_table.h"

#include <fmt/format.h>

#include "core/terminal.h"
#include "doctor/finding_lines.h"

namespace trainrig {

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
        auto word = fmt::format("{:<5}", finding_word(f.status));
        out += fmt::format("  {} {:<{}}  {}\n", colorize(word, finding_color(f.status), color),
                           f.id, width, f.summary);
        if (verbose) out += finding_details(f, color);
    }
    return out + findings_footer(r.findings, verbose);
}

}  // namespace trainrig

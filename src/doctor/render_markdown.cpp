// Markdown rendering of a doctor report: a summary table, then a section per finding that is
// not a pass (every finding with -v), for tickets and wikis.
#include <fmt/format.h>

#include "doctor/report.h"

namespace trainrig {

namespace {
// Keeps a cell on one line and stops '|' from ending it.
std::string cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += ' ';
        else
            out += c;
    }
    return out;
}
}  // namespace

std::string render_markdown(const DoctorReport& r, bool verbose) {
    std::string out = fmt::format("# trainrig doctor: {}\n\nSource: {}, collected {}.\n\n",
                                  cell(r.hostname), cell(r.source), r.collected_at);
    auto c = count_by_status(r.findings);
    out += fmt::format("**{} pass, {} warn, {} fail, {} skip, {} error**\n\n",
                       c[FindingStatus::kPass], c[FindingStatus::kWarn], c[FindingStatus::kFail],
                       c[FindingStatus::kSkip], c[FindingStatus::kError]);
    out += "| status | check | summary |\n|---|---|---|\n";
    for (const auto& f : r.findings)
        out += fmt::format("| {} | `{}` | {} |\n", status_name(f.status), f.id, cell(f.summary));
    for (const auto& f : r.findings) {
        if (!verbose && (f.status == FindingStatus::kPass || f.status == FindingStatus::kSkip))
            continue;
        out += fmt::format("\n## {} `{}` — {}\n\n{}\n", status_name(f.status), f.id, f.title,
                           f.summary);
        if (!f.evidence.empty()) {
            out += "\nEvidence:\n\n";
            for (const auto& e : f.evidence) out += fmt::format("- {}\n", cell(e));
        }
        if (!f.remedy.empty()) out += fmt::format("\nRemedy: {}\n", f.remedy);
        if (!f.refs.empty()) {
            std::vector<std::string> refs = f.refs;
            out += fmt::format("\nReferences: {}\n", fmt::join(refs, "; "));
        }
    }
    return out;
}

}  // namespace trainrig

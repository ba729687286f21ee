#include "doctor/render_markdown.h"

#include <fmt/format.h>

#include "core/markup.h"

namespace trainrig {

std::string render_markdown(const DoctorReport& r, bool verbose) {
    std::string out =
        fmt::format("# trainrig doctor: {}\n\nSource: {}, collected {}.\n\n",
                    markdown_cell(r.hostname), markdown_cell(r.source), r.collected_at);
    auto c = count_by_status(r.findings);
    out += fmt::format("**{} pass, {} warn, {} fail, {} skip, {} error**\n\n",
                       c[FindingStatus::kPass], c[FindingStatus::kWarn], c[FindingStatus::kFail],
                       c[FindingStatus::kSkip], c[FindingStatus::kError]);
    out += "| status | check | summary |\n|---|---|---|\n";
    for (const auto& f : r.findings)
        out += fmt::format("| {} | `{}` | {} |\n", status_name(f.status), f.id,
                           markdown_cell(f.summary));
    for (const auto& f : r.findings) {
        if (!verbose && (f.status == FindingStatus::kPass || f.status == FindingStatus::kSkip))
            continue;
        out += fmt::format("\n## {} `{}` — {}\n\n{}\n", status_name(f.status), f.id, f.title,
                           f.summary);
        if (!f.evidence.empty()) {
            out += "\nEvidence:\n\n";
            for (const auto& e : f.evidence) out += fmt::format("- {}\n", markdown_cell(e));
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

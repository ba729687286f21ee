#include "validate/report_coverage.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "core/markup.h"
#include "core/text.h"
#include "validate/report_render.h"

namespace trainrig::validate {

namespace {

using nlohmann::json;

const json* coverage_of(const json& r) {
    const auto it = r.find("coverage");
    return it != r.end() && it->is_object() ? &*it : nullptr;
}

std::string headline(const json& c) {
    return fmt::format("{} of {} required checks judged ({})", c.value("judged", 0),
                       c.value("required", 0),
                       c.contains("class") ? report_text(c["class"], "label") : "unknown class");
}

// The checks, by reference: the rows below point into them.
const json& checks_of(const json& c) {
    static const json none = json::array();
    const auto it = c.find("checks");
    return it != c.end() && it->is_array() ? *it : none;
}

bool judged(const json& k) {
    const std::string o = report_text(k, "outcome");
    return o == "passed" || o == "warned" || o == "failed" || o == "measured";
}

// The required checks not judged, then the rest that are required; each row: id, kind, outcome,
// why required, why not judged.
std::vector<const json*> required_rows(const json& c) {
    std::vector<const json*> missing, rest;
    for (const auto& k : checks_of(c))
        if (k.value("required", false)) (judged(k) ? rest : missing).push_back(&k);
    missing.insert(missing.end(), rest.begin(), rest.end());
    return missing;
}

// Why each check not required is not: "no NVIDIA GPU" -> [pci.gpu-visible, ...].
std::map<std::string, std::vector<std::string>> not_required(const json& c) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& k : checks_of(c))
        if (!k.value("required", false)) {
            const std::string why = report_text(k, "outcome") == "skipped"
                                        ? "skipped with --skip"
                                        : report_text(k, "reason", report_text(k, "why"));
            out[why].push_back(report_text(k, "id"));
        }
    return out;
}

}  // namespace

std::string coverage_text(const json& r) {
    const json* c = coverage_of(r);
    if (!c) return "";
    std::string out = "  coverage: " + headline(*c) + "\n";
    for (const json* k : required_rows(*c)) {
        if (judged(*k)) break;
        out += fmt::format(
            "    not judged: {} ({}{}{})\n", report_text(*k, "id"), report_text(*k, "outcome"),
            report_text(*k, "reason").empty() ? "" : ": ", report_text(*k, "reason"));
    }
    return out;
}

std::string coverage_markdown(const json& r) {
    const json* c = coverage_of(r);
    if (!c) return "";
    std::string md = "## Coverage\n\n" + headline(*c) + ".";
    md += c->value("complete", false)
              ? " Every check this class requires was judged.\n\n"
              : " A plain READY needs every one: the verdict says what was not judged.\n\n";
    md += "| check | kind | outcome | required for | note |\n|---|---|---|---|---|\n";
    for (const json* k : required_rows(*c))
        md += fmt::format(
            "| `{}` | {} | {} | {} | {} |\n", report_text(*k, "id"), report_text(*k, "kind"),
            judged(*k) ? report_text(*k, "outcome") : "**" + report_text(*k, "outcome") + "**",
            markdown_cell(report_text(*k, "why")), markdown_cell(report_text(*k, "reason")));
    md += "\nNot required here:\n\n";
    for (const auto& [why, ids] : not_required(*c))
        md += fmt::format("- {}: {}\n", markdown_cell(why), join(ids, ", "));
    return md + "\n";
}

std::string coverage_html(const json& r) {
    const json* c = coverage_of(r);
    if (!c) return "";
    std::string h = "<h2>Coverage</h2>\n<p id=\"coverage\">" + html_escape(headline(*c)) + ".";
    h += c->value("complete", false)
             ? " Every check this class requires was judged.</p>\n"
             : " A plain READY needs every one: the verdict says what was not judged.</p>\n";
    h += "<table id=\"coverage-checks\"><thead><tr><th>check</th><th>kind</th><th>outcome</th>"
         "<th>required for</th><th>note</th></tr></thead><tbody>\n";
    for (const json* k : required_rows(*c))
        h += fmt::format(
            "<tr><td><code>{}</code></td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td></tr>\n",
            html_escape(report_text(*k, "id")), html_escape(report_text(*k, "kind")),
            judged(*k) ? "" : " class=\"l-unknown\"", html_escape(report_text(*k, "outcome")),
            html_escape(report_text(*k, "why")), html_escape(report_text(*k, "reason")));
    h += "</tbody></table>\n<p class=\"meta\">Not required here:</p><ul class=\"meta\">\n";
    for (const auto& [why, ids] : not_required(*c))
        h += "<li>" + html_escape(why) + ": " + html_escape(join(ids, ", ")) + "</li>\n";
    return h + "</ul>\n";
}

}  // namespace trainrig::validate

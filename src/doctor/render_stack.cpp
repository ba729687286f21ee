// Table and JSON renderings of a recommendation and of a stack check; see stack_render.h.
#include "doctor/render_stack.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/terminal.h"
#include "core/text.h"
#include "doctor/finding_lines.h"
#include "doctor/render_json.h"
#include "doctor/report.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {

namespace stack_render_detail {

std::string data_line(const StackData& d) {
    return fmt::format("data current to {} ({})", d.current_to, d.where);
}

std::string cc_words(const std::vector<ComputeCapability>& ccs) {
    std::vector<std::string> parts;
    for (auto cc : ccs) parts.push_back(cc_text(cc));
    return fmt::format("compute capability {}", join(parts, ", "));
}

nlohmann::json gpu_json(const GpuTarget& g) {
    nlohmann::json ccs = nlohmann::json::array();
    for (auto cc : g.ccs) ccs.push_back(cc_text(cc));
    return {{"id", g.id.empty() ? nlohmann::json() : nlohmann::json(g.id)},
            {"name", g.name},
            {"compute_capabilities", ccs},
            {"how", g.how}};
}

nlohmann::json opt(const std::string& s) {
    return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json recommended_json(const Recommendation& r) {
    if (!r.judged || !r.build)
        return {{"torch", opt(r.torch_version)},
                {"cuda", r.pins.cuda ? nlohmann::json(*r.pins.cuda) : nlohmann::json()}};
    const char* modules = r.open_modules == OpenModules::kRequired      ? "required"
                          : r.open_modules == OpenModules::kRecommended ? "recommended"
                                                                        : "unsupported";
    return {{"driver_branch", r.driver_branch},
            {"driver_min", r.driver_min},
            {"driver_branch_type",
             r.branch ? nlohmann::json(std::string(branch_type_name(r.branch->type)))
                      : nlohmann::json()},
            {"open_kernel_modules", modules},
            {"cuda", cuda_text(r.cuda)},
            {"cudnn", opt(r.build->cudnn)},
            {"nccl", opt(r.build->nccl)},
            {"torch", r.torch_version},
            {"torch_cuda_tag", cuda_tag(r.cuda)},
            {"index_url", "https://download.pytorch.org/whl/" + cuda_tag(r.cuda)},
            {"experimental_build", r.build->experimental},
            {"python", r.python}};
}

// Pads to a display width counted in code points (the table has "≥"-free ASCII, but names can
// carry UTF-8).
std::string pad(const std::string& s, size_t width) {
    size_t cps = 0;
    for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
    return cps >= width ? s : s + std::string(width - cps, ' ');
}

}  // namespace stack_render_detail

std::string render_stack_table(const StackView& v, bool verbose, bool color) {
    using namespace stack_render_detail;
    const Recommendation& r = *v.rec;
    std::string out = colorize(fmt::format("trainrig stack: {} ({}, {}); {}", r.gpu.name,
                                           cc_words(r.gpu.ccs), r.gpu.how, data_line(*v.data)),
                               Color::kBold, color);
    out += "\n\n";
    // The sources, numbered once each, and referred to by number in the table.
    std::vector<std::string> sources;
    auto source_no = [&](const std::string& s) -> std::string {
        if (s.empty()) return "";
        auto it = std::find(sources.begin(), sources.end(), s);
        if (it == sources.end()) {
            sources.push_back(s);
            return fmt::format("[{}]", sources.size());
        }
        return fmt::format("[{}]", it - sources.begin() + 1);
    };
    size_t w_name = 9, w_version = 7;
    for (const auto& c : r.components) {
        w_name = std::max(w_name, c.name.size());
        w_version = std::max(w_version, c.version.size());
    }
    out += colorize(fmt::format("  {}  {}  {}", pad("component", w_name), pad("version", w_version),
                                "why [source]"),
                    Color::kBold, color);
    out += "\n";
    for (const auto& c : r.components) {
        const std::string ref = source_no(c.source);
        out += fmt::format("  {}  {}  {}{}\n", pad(c.name, w_name), pad(c.version, w_version),
                           c.why, ref.empty() ? "" : " " + ref);
    }
    for (const auto& w : r.warnings)
        out += colorize("  warning: " + w, Color::kYellow, color) + "\n";
    if (!sources.empty()) {
        out += "\nSources:\n";
        for (size_t i = 0; i < sources.size(); ++i)
            out += fmt::format("  [{}] {}\n", i + 1, sources[i]);
    }
    if (r.judged && r.build) {
        out += "\n";
        if (v.distro) {
            out += colorize(fmt::format("Install on {}, in this order:", v.distro->name),
                            Color::kBold, color);
            out += "\n";
            for (const auto& s : v.steps) {
                if (verbose) out += colorize("  # " + s.why, Color::kGrey, color) + "\n";
                out += "  " + s.command + "\n";
            }
            if (verbose)
                out += fmt::format("  (sources: {}; {})\n", kInstallSources, v.distro->source);
            out +=
                "  (On NVSwitch boards (HGX) the fabric manager must match the driver's version: "
                "doctor's stack.fabric-manager checks it.)\n";
        } else {
            out += fmt::format("No install steps: {}.\n", v.distro_note);
            out += "  " + pip_install_line(r) + "\n";
        }
    }
    return out;
}

nlohmann::json render_stack_json(const StackView& v) {
    using namespace stack_render_detail;
    const Recommendation& r = *v.rec;
    nlohmann::json components = nlohmann::json::array();
    for (const auto& c : r.components)
        components.push_back({{"component", c.name},
                              {"version", c.version},
                              {"why", c.why},
                              {"source", opt(c.source)}});
    nlohmann::json install;
    if (v.distro && r.judged && r.build) {
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& s : v.steps) steps.push_back({{"command", s.command}, {"why", s.why}});
        install = {{"distro", v.distro->id},
                   {"name", v.distro->name},
                   {"steps", steps},
                   {"sources", std::string(kInstallSources) + "; " + v.distro->source}};
    }
    return {{"schema", kStackSchema},
            {"schema_version", kStackSchemaVersion},
            {"data", {{"current_to", v.data->current_to}, {"source", v.data->where}}},
            {"gpu", gpu_json(r.gpu)},
            {"pins",
             {{"cuda", r.pins.cuda ? nlohmann::json(*r.pins.cuda) : nlohmann::json()},
              {"torch", r.pins.torch ? nlohmann::json(*r.pins.torch) : nlohmann::json()}}},
            {"judged", r.judged},
            {"recommended", recommended_json(r)},
            {"components", components},
            {"install", install},
            {"install_note", opt(v.distro ? "" : v.distro_note)},
            {"pip", opt(pip_install_line(r))},
            {"warnings", r.warnings}};
}

std::string render_check_table(const CheckView& v, bool verbose, bool color) {
    using namespace stack_render_detail;
    const Recommendation& r = *v.rec;
    std::string out =
        colorize(fmt::format("trainrig stack check: {} — {}; for {} ({}); {}", v.hostname, v.source,
                             r.gpu.name, cc_words(r.gpu.ccs), data_line(*v.data)),
                 Color::kBold, color);
    out += "\n\n";
    size_t w0 = 9, w1 = 12, w2 = 11;
    for (const auto& row : v.check->rows) {
        w0 = std::max(w0, row.component.size());
        w1 = std::max(w1, row.installed.size());
        w2 = std::max(w2, row.recommended.size());
    }
    out += colorize(fmt::format("  {}  {}  {}  {}", pad("component", w0), pad("this machine", w1),
                                pad("recommended", w2), "status"),
                    Color::kBold, color);
    out += "\n";
    for (const auto& row : v.check->rows)
        out += fmt::format("  {}  {}  {}  {}\n", pad(row.component, w0), pad(row.installed, w1),
                           pad(row.recommended, w2),
                           colorize(finding_word(row.status), finding_color(row.status), color));
    out += "\n";
    size_t width = 0;
    for (const auto& f : v.check->findings) width = std::max(width, f.id.size());
    for (const auto& f : v.check->findings) {
        out += fmt::format("  {} {}  {}\n",
                           colorize(pad(finding_word(f.status), 5), finding_color(f.status), color),
                           pad(f.id, width), f.summary);
        if (verbose) out += finding_details(f, color);
    }
    for (const auto& w : r.warnings)
        out += colorize("  warning: " + w, Color::kYellow, color) + "\n";
    return out + findings_footer(v.check->findings, verbose);
}

nlohmann::json render_check_json(const CheckView& v) {
    using namespace stack_render_detail;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : v.check->rows)
        rows.push_back({{"component", row.component},
                        {"installed", row.installed},
                        {"recommended", row.recommended},
                        {"status", std::string(status_name(row.status))}});
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : v.check->findings) findings.push_back(finding_to_json(f));
    auto c = count_by_status(v.check->findings);
    nlohmann::json summary = nlohmann::json::object();
    for (auto s : {FindingStatus::kPass, FindingStatus::kWarn, FindingStatus::kFail,
                   FindingStatus::kSkip, FindingStatus::kError})
        summary[std::string(status_name(s))] = c[s];
    return {{"schema", kStackCheckSchema},
            {"schema_version", kStackSchemaVersion},
            {"data", {{"current_to", v.data->current_to}, {"source", v.data->where}}},
            {"hostname", v.hostname},
            {"source", v.source},
            {"gpu", gpu_json(v.rec->gpu)},
            {"judged", v.rec->judged},
            {"recommended", recommended_json(*v.rec)},
            {"components", rows},
            {"findings", findings},
            {"summary", summary},
            {"warnings", v.rec->warnings}};
}

}  // namespace trainrig::stack

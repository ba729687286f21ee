#include "validate/report_training.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "validate/report_render.h"

namespace trainrig::validate {

namespace {

using nlohmann::json;

struct Phase {
    const char* key;  // in counted.steps[]
    const char* label;
    const char* color;
};
constexpr std::array<Phase, 5> kPhases = {{{"data_wait_s", "data wait", "#8c564b"},
                                           {"forward_s", "forward", "#1f77b4"},
                                           {"backward_s", "backward", "#2ca02c"},
                                           {"comm_s", "communication", "#ff7f0e"},
                                           {"optimizer_s", "optimizer", "#9467bd"}}};

const json& steps_of(const json& record) {
    static const json none = json::array();
    const auto c = record.find("counted");
    if (c == record.end() || !c->is_object()) return none;
    const auto s = c->find("steps");
    return s != c->end() && s->is_array() ? *s : none;
}

// A step's seconds: `step_s`, as the train log names it; reports whose bench document is of
// schema version 2 named it `total_s`.
double step_seconds(const json& step) {
    return step.contains("step_s") ? step.value("step_s", 0.0) : step.value("total_s", 0.0);
}

std::string loss_curve(const json& steps) {
    double lo = 1e300, hi = -1e300;
    for (const auto& s : steps) {
        lo = std::min(lo, s.value("loss", 0.0));
        hi = std::max(hi, s.value("loss", 0.0));
    }
    if (hi - lo < 1e-9) hi = lo + 1;
    const double W = 640, H = 160, L = 48, B = 20, n = static_cast<double>(steps.size());
    auto X = [&](double i) { return L + (W - L - 8) * (n > 1 ? i / (n - 1) : 0.5); };
    auto Y = [&](double v) { return 6 + (H - B - 6) * (1 - (v - lo) / (hi - lo)); };
    std::string svg = fmt::format(
        "<div class=\"plot\" data-field=\"loss\"><b>Training loss per step</b><br>"
        "<svg width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"training loss\">"
        "<line x1=\"{2}\" x2=\"{2}\" y1=\"6\" y2=\"{3}\" stroke=\"#999\"/>"
        "<line x1=\"{2}\" x2=\"{4}\" y1=\"{3}\" y2=\"{3}\" stroke=\"#999\"/>"
        "<text x=\"2\" y=\"12\">{5:.2f}</text><text x=\"2\" y=\"{3}\">{6:.2f}</text>"
        "<text x=\"{7}\" y=\"{8}\">step {9}</text>",
        W, H, L, H - B, W - 8, hi, lo, W - 60, H - 4, steps.size());
    std::string points;
    for (size_t i = 0; i < steps.size(); ++i)
        points += fmt::format("{:.1f},{:.1f} ", X(static_cast<double>(i)),
                              Y(steps[i].value("loss", 0.0)));
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"{}\"/>", points);
    for (size_t i = 0; i < steps.size(); ++i)
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>",
                           X(static_cast<double>(i)), Y(steps[i].value("loss", 0.0)),
                           steps[i].value("timed", true) ? "#1f77b4" : "#aaa");
    return svg +
           "</svg><div class=\"legend\"><span><i class=\"sw\" style=\"background:#aaa\"></i>"
           "warm-up step (not timed)</span></div></div>\n";
}

// One horizontal bar per step, its phases stacked; the bar's length is the step's total, the
// unlabelled rest what no phase accounts for.
std::string step_breakdown(const json& steps) {
    double longest = 0;
    for (const auto& s : steps) longest = std::max(longest, step_seconds(s));
    if (!(longest > 0)) return "";
    const double W = 640, L = 60, row = 14, H = row * static_cast<double>(steps.size()) + 24;
    std::string svg = fmt::format(
        "<div class=\"plot\" data-field=\"step-phases\"><b>Where each step's time went</b><br>"
        "<svg width=\"{}\" height=\"{:.0f}\" role=\"img\" aria-label=\"step time by phase\">",
        W, H);
    for (size_t i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        const double y = 4 + row * static_cast<double>(i);
        double x = L;
        svg += fmt::format("<text x=\"2\" y=\"{:.0f}\">step {}</text>", y + 10, s.value("step", 0));
        for (const auto& p : kPhases) {
            const double w = (W - L - 70) * s.value(p.key, 0.0) / longest;
            if (w <= 0) continue;
            svg += fmt::format(
                "<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", x,
                y, w, row - 3, p.color);
            x += w;
        }
        const double end = L + (W - L - 70) * step_seconds(s) / longest;
        svg += fmt::format(
            "<rect x=\"{0:.1f}\" y=\"{1:.0f}\" width=\"{2:.1f}\" height=\"{3}\" fill=\"#ddd\"/>"
            "<text x=\"{4:.0f}\" y=\"{5:.0f}\">{6:.3g} s</text>",
            x, y, std::max(end - x, 0.0), row - 3, end + 4, y + 10, step_seconds(s));
    }
    svg += "</svg><div class=\"legend\">";
    for (const auto& p : kPhases)
        svg += fmt::format("<span><i class=\"sw\" style=\"background:{}\"></i>{}</span>", p.color,
                           p.label);
    return svg +
           "<span><i class=\"sw\" style=\"background:#ddd\"></i>outside the phases</span>"
           "</div></div>\n";
}

}  // namespace

const json* training_record(const json& report) {
    const auto b = report.find("bench");
    if (b == report.end() || !b->is_object()) return nullptr;
    const auto results = b->find("results");
    if (results == b->end() || !results->is_array()) return nullptr;
    for (const auto& r : *results)
        if (r.value("bench", "") == "train" && r.value("name", "") == "step-time") return &r;
    return nullptr;
}

std::string training_html(const json& report) {
    const json* r = training_record(report);
    if (!r || steps_of(*r).empty()) return "";
    const auto& steps = steps_of(*r);
    std::string h = "<h2>Training run</h2>\n";
    const auto& params = r->value("params", json::object());
    h += fmt::format(
        "<p class=\"meta\">{} backend, model {}, {} × {} tokens per step, {} steps; "
        "{}</p>\n",
        html_escape(params.value("backend", "")), html_escape(params.value("model", "")),
        params.value("batch", 0), params.value("seq", 0), steps.size(),
        html_escape(report_text(*r, "verify_detail")));
    return h + loss_curve(steps) + step_breakdown(steps);
}

std::string training_markdown(const json& report) {
    const json* r = training_record(report);
    if (!r || steps_of(*r).empty()) return "";
    const auto& steps = steps_of(*r);
    std::string md = fmt::format("## Training run\n\n{}; loss per step: {}.\n\n",
                                 report_text(*r, "verify_detail"), [&] {
                                     std::vector<std::string> l;
                                     for (const auto& s : steps)
                                         l.push_back(fmt::format("{:.3f}", s.value("loss", 0.0)));
                                     return join(l, ", ");
                                 }());
    md +=
        "| step | total | data wait | forward | backward | communication | optimizer |\n"
        "|---|---|---|---|---|---|---|\n";
    for (const auto& s : steps)
        md += fmt::format("| {}{} | {:.4f} s | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} |\n",
                          s.value("step", 0), s.value("timed", true) ? "" : " (warm-up)",
                          step_seconds(s), s.value("data_wait_s", 0.0), s.value("forward_s", 0.0),
                          s.value("backward_s", 0.0), s.value("comm_s", 0.0),
                          s.value("optimizer_s", 0.0));
    return md + "\n";
}

}  // namespace trainrig::validate

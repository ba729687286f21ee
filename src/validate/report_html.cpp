// report.html: one self-contained file. Every plot is SVG that trainrig writes itself (a few
// hundred lines, no library to inline or keep current, crisp on screen and on paper, and the
// file stays small: docs/report.md, "Why inline SVG"). The only script filters the findings
// table; a Content-Security-Policy forbids every network request.
#include "validate/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/quantity.h"
#include "measure/bench_document.h"
#include "nvml/nvml_api.h"
#include "validate/report_coverage.h"
#include "validate/report_render.h"
#include "validate/report_training.h"

namespace trainrig::validate {

namespace {

using nlohmann::json;

std::string esc(std::string_view s) { return html_escape(s); }

const char* verdict_class(const std::string& v) {
    return v == "READY"                 ? "ready"
           : v == "READY WITH WARNINGS" ? "warn"
           : v == "NOT READY"           ? "fail"
                                        : "unknown";
}

constexpr const char* kStyle = R"CSS(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.banner{padding:14px 18px;border-radius:6px;color:#fff;margin-bottom:8px}
.ready{background:#1b7f3b}.warn{background:#b26a00}.fail{background:#b3261e}.unknown{background:#555}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{border:1px solid #ddd;padding:4px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.l-fail{color:#b3261e;font-weight:600}
td.l-warn{color:#b26a00;font-weight:600}td.l-unknown{color:#555;font-weight:600}
.meta{color:#555}.plot{margin:6px 0 14px}svg text{font:11px system-ui,sans-serif;fill:#333}
.legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:10px;height:10px;
margin-right:4px}input{margin:4px 0;padding:3px 6px;width:260px}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}.plot,tr{break-inside:avoid}
input{display:none}.banner{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
@page{size:A4;margin:12mm}
)CSS";

constexpr const char* kFilterScript = R"JS(
var filter = document.getElementById('filter');
if (filter) filter.addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('#findings tbody tr').forEach(function (tr) {
    tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
)JS";

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                          "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

std::string items_table(const json& items) {
    if (items.empty()) return "<p>Nothing: every check that ran passed.</p>\n";
    const ItemColumns cols = item_columns(items);  // a column empty in every row is left out
    std::string h = std::string("<table id=\"items\"><thead><tr><th>level</th><th>id</th>") +
                    (cols.where ? "<th>where</th>" : "") + "<th>what</th>" +
                    (cols.measured ? "<th>measured / expected</th>" : "") +
                    "<th>what to do</th></tr></thead><tbody>\n";
    for (const auto& i : items) {
        std::vector<std::string> dev;
        for (const auto& d : i.value("devices", json::array())) dev.push_back(d.get<std::string>());
        std::string m = esc(report_text(i, "measured"));
        if (!report_text(i, "expected").empty())
            m += " / " + esc(report_text(i, "expected")) + "<br><span class=\"meta\">" +
                 esc(report_text(i, "tolerance") + "; " + report_text(i, "source")) + "</span>";
        h += fmt::format("<tr><td class=\"l-{0}\">{0}</td><td><code>{1}</code></td>",
                         esc(report_text(i, "level")), esc(report_text(i, "id")));
        if (cols.where) h += "<td>" + esc(join(dev, ", ")) + "</td>";
        h += "<td>" + esc(report_text(i, "summary")) + "</td>";
        if (cols.measured) h += "<td>" + m + "</td>";
        h += "<td>" + esc(report_text(i, "action")) + "</td></tr>\n";
    }
    return h + "</tbody></table>\n";
}

std::string stages_table(const json& stages) {
    std::string h =
        "<table><thead><tr><th>stage</th><th>state</th><th>seconds</th><th>budget</th>"
        "<th>note</th></tr></thead><tbody>\n";
    for (const auto& s : stages)
        h += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>{}</td></tr>\n",
            esc(report_text(s, "title")), esc(report_text(s, "state")), s.value("seconds", 0.0),
            s.value("budget_seconds", 0.0), esc(report_text(s, "reason")));
    return h + "</tbody></table>\n";
}

std::string topology_table(const json& topo) {
    const auto& gpus = topo.value("gpus", json::array());
    if (gpus.empty()) return "<p class=\"meta\">No GPU in the topology.</p>\n";
    std::string h = "<table id=\"topology\"><thead><tr><th></th>";
    for (const auto& g : gpus) h += "<th>" + esc(report_text(g, "name")) + "</th>";
    h += "<th>CPUs</th><th>NUMA</th></tr></thead><tbody>\n";
    const auto& m = topo.value("gpu_gpu", json::array());
    for (size_t i = 0; i < gpus.size(); ++i) {
        h += "<tr><th>" + esc(report_text(gpus[i], "name")) + "</th>";
        for (size_t j = 0; j < gpus.size(); ++j)
            h += "<td>" +
                 (i < m.size() && j < m[i].size() ? esc(report_text(m[i][j], "label"))
                                                  : std::string()) +
                 "</td>";
        h += "<td>" + esc(report_text(gpus[i], "cpus")) + "</td><td>" +
             esc(report_text(gpus[i], "numa")) + "</td></tr>\n";
    }
    return h + "</tbody></table>\n";
}

// One bar per measurement that has an expectation: the median against the expected value, over
// the fail / warn / pass bands of bench's tolerance.
std::string bench_bars(const json& bench) {
    const auto& results = bench.value("results", json::array());
    const auto& th = bench.value("thresholds", json::object());
    const double pass = th.value("pass", 0.9), warn = th.value("warn", 0.75);
    std::string h =
        "<table id=\"bench\"><thead><tr><th>measurement</th><th>median</th>"
        "<th>expected</th><th>against expected</th><th>status</th></tr></thead>"
        "<tbody>\n";
    for (const auto& r : results) {
        const std::string unit = report_text(r, "unit");
        const bool has = r["expected"].is_number() && r["ratio"].is_number();
        std::string bar =
            "<span class=\"meta\">" + esc(report_text(r, "no_expectation")) + "</span>";
        if (has) {
            const double ratio = r["ratio"].get<double>();
            const bool floor = r.value("expected_floor", false);
            const double top = std::max(1.25, ratio * 1.05), w = 300;
            auto px = [&](double q) { return w * std::clamp(q / top, 0.0, 1.0); };
            const double p = floor ? 1.0 : pass;
            bar = fmt::format(
                "<svg class=\"bar\" width=\"{0}\" height=\"18\" role=\"img\" aria-label=\"{1:.0f} "
                "% "
                "of expected\"><rect x=\"0\" y=\"0\" width=\"{2:.1f}\" height=\"18\" "
                "fill=\"#f6d5d3\"/><rect x=\"{2:.1f}\" y=\"0\" width=\"{3:.1f}\" height=\"18\" "
                "fill=\"#fbe7c6\"/><rect x=\"{4:.1f}\" y=\"0\" width=\"{5:.1f}\" height=\"18\" "
                "fill=\"#d3ecd9\"/><rect x=\"0\" y=\"5\" width=\"{6:.1f}\" height=\"8\" "
                "fill=\"#333\"/><line x1=\"{7:.1f}\" x2=\"{7:.1f}\" y1=\"0\" y2=\"18\" "
                "stroke=\"#000\"/></svg> {1:.0f} %",
                w, 100 * ratio, px(warn), px(p) - px(warn), px(p), w - px(p), px(ratio), px(1.0));
        }
        h += fmt::format("<tr><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         esc(report_text(r, "bench")), esc(report_text(r, "name")),
                         esc(format_quantity(r.value("median", 0.0), unit)),
                         has ? esc(format_quantity(r["expected"].get<double>(), unit)) : "-", bar,
                         esc(report_text(r, "status")));
    }
    return h + "</tbody></table>\n";
}

// A line per GPU of one field over the run, with the intervals a GPU's clocks were held down by
// a thermal or hardware slowdown shaded (policy/gpu_health.h: those reasons fail doctor).
std::string time_plot(const json& samples, const char* field, const char* title, double scale,
                      const char* unit) {
    std::map<int, std::vector<std::pair<double, double>>> lines;
    std::vector<std::pair<double, double>> held;  // [from, to] of slowdown ticks
    double t0 = 1e300, t1 = -1e300, lo = 1e300, hi = -1e300;
    constexpr uint64_t kHeld = nvml::kClocksEventHwSlowdown | nvml::kClocksEventSwThermalSlowdown |
                               nvml::kClocksEventHwThermalSlowdown |
                               nvml::kClocksEventHwPowerBrakeSlowdown;
    for (const auto& s : samples) {
        const double t = s.value("t", 0.0);
        t0 = std::min(t0, t);
        t1 = std::max(t1, t);
        if (s.contains("clock_event_reasons") && (s["clock_event_reasons"].get<uint64_t>() & kHeld))
            held.emplace_back(t - 0.5, t + 0.5);
        if (!s.contains(field)) continue;
        const double v = s[field].get<double>() * scale;
        lines[s.value("gpu", 0)].emplace_back(t, v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (lines.empty()) return "";
    if (hi - lo < 1e-9) hi = lo + 1, lo -= 1;
    const double W = 640, H = 150, L = 48, B = 20, span = std::max(t1 - t0, 1.0);
    auto X = [&](double t) { return L + (W - L - 8) * (t - t0) / span; };
    auto Y = [&](double v) { return 6 + (H - B - 6) * (1 - (v - lo) / (hi - lo)); };
    std::string svg = fmt::format(
        "<div class=\"plot\" data-field=\"{0}\"><b>{1}</b><br><svg width=\"{2}\" height=\"{3}\" "
        "role=\"img\" aria-label=\"{1}\">",
        field, esc(title), W, H);
    for (const auto& [a, b] : held)
        svg += fmt::format(
            "<rect class=\"held\" x=\"{:.1f}\" y=\"6\" width=\"{:.1f}\" "
            "height=\"{:.1f}\" fill=\"#f6d5d3\"/>",
            X(a), std::max(X(b) - X(a), 1.0), H - B - 6);
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"6\" y2=\"{1}\" stroke=\"#999\"/>"
        "<line x1=\"{0}\" x2=\"{2}\" y1=\"{1}\" y2=\"{1}\" stroke=\"#999\"/>",
        L, H - B, W - 8);
    svg += fmt::format(
        "<text x=\"2\" y=\"12\">{:.0f} {}</text><text x=\"2\" y=\"{:.0f}\">{:.0f}"
        "</text><text x=\"{:.0f}\" y=\"{:.0f}\">{:.0f} s</text>",
        hi, unit, H - B, lo, W - 60, H - 4, span);
    for (const auto& [gpu, pts] : lines) {
        std::string p;
        for (const auto& [t, v] : pts) p += fmt::format("{:.1f},{:.1f} ", X(t), Y(v));
        svg += fmt::format(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\" "
            "points=\"{}\"/>",
            kPalette[static_cast<size_t>(gpu) % std::size(kPalette)], p);
    }
    svg += "</svg><div class=\"legend\">";
    for (const auto& [gpu, pts] : lines)
        svg += fmt::format("<span><i class=\"sw\" style=\"background:{}\"></i>GPU {}</span>",
                           kPalette[static_cast<size_t>(gpu) % std::size(kPalette)], gpu);
    if (!held.empty())
        svg +=
            "<span><i class=\"sw\" style=\"background:#f6d5d3\"></i>clocks held down "
            "(thermal or hardware slowdown)</span>";
    return svg + "</div></div>\n";
}

std::string findings_table(const json& doctor) {
    std::string h =
        "<input id=\"filter\" placeholder=\"filter: id, status or text\" aria-label=\"filter\">"
        "<table id=\"findings\"><thead><tr><th>id</th><th>status</th><th>summary</th>"
        "<th>remedy</th></tr></thead><tbody>\n";
    for (const auto& f : doctor.value("findings", json::array()))
        h += fmt::format(
            "<tr><td><code>{}</code></td><td class=\"l-{}\">{}</td><td>{}</td>"
            "<td>{}</td></tr>\n",
            esc(report_text(f, "id")), esc(report_text(f, "status")), esc(report_text(f, "status")),
            esc(report_text(f, "summary")), esc(report_text(f, "remedy")));
    return h + "</tbody></table>\n";
}

}  // namespace

std::string render_report_html(const json& r) {
    const std::string verdict = report_text(r, "verdict");
    std::string h = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        "<meta name=\"viewport\" content=\"width=device-width\">"
        "<title>{} — trainrig validate, {}</title><style>{}</style></head><body>\n",
        esc(verdict), esc(report_text(r, "host")), kStyle);
    h += fmt::format("<div class=\"banner {}\" id=\"verdict\"><h1>{}</h1></div>\n",
                     verdict_class(verdict), esc(report_text(r, "verdict_line")));
    std::vector<std::string> argv;
    for (const auto& a : r.value("command_line", json::array()))
        argv.push_back(a.get<std::string>());
    h += fmt::format(
        "<p class=\"meta\">Host <b>{}</b>, level {}, {} to {} ({:.0f} s). "
        "<code>{}</code></p>\n",
        esc(report_text(r, "host")), esc(report_text(r, "level")),
        esc(report_text(r, "started_at")), esc(report_text(r, "finished_at")),
        r.value("seconds", 0.0), esc(join(argv, " ")));
    h += "<h2>What to do first</h2>\n" + items_table(r.value("items", json::array()));
    h += coverage_html(r);
    h += "<h2>Stages</h2>\n" + stages_table(r.value("stages", json::array()));
    if (r.contains("topology")) h += "<h2>Topology</h2>\n" + topology_table(r["topology"]);
    if (r.contains("bench")) h += "<h2>Measurements</h2>\n" + bench_bars(r["bench"]);
    h += training_html(r);
    if (telemetry_shown(r)) {
        const auto& samples = r["watch"].value("samples", json::array());
        std::string plots = time_plot(samples, "temperature_celsius", "Temperature", 1, "°C") +
                            time_plot(samples, "sm_clock_hertz", "SM clock", 1e-6, "MHz") +
                            time_plot(samples, "power_watts", "Power", 1, "W") +
                            time_plot(samples, "utilization", "Utilisation", 100, "%");
        h += "<h2>GPU telemetry through the run</h2>\n" +
             (plots.empty() ? "<p class=\"meta\">No GPU samples: " +
                                  esc(r["watch"].value("problem", std::string("no GPU"))) + "</p>\n"
                            : plots);
    }
    if (r.contains("doctor"))
        h += "<h2>Every configuration check</h2>\n" + findings_table(r["doctor"]);
    if (r.contains("versions")) {
        h += "<h2>Versions</h2>\n<table><tbody>\n";
        for (const auto& [k, v] : r["versions"].items())
            h += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(k),
                             esc(v.is_null()     ? "unknown"
                                 : v.is_string() ? v.get<std::string>()
                                                 : v.dump()));
        h += "</tbody></table>\n";
    }
    h += std::string("<script>") + kFilterScript + "</script>\n</body></html>\n";
    return h;
}

}  // namespace trainrig::validate

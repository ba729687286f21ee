// fleet-report.html: one self-contained page (inline SVG, no request of any kind: a
// Content-Security-Policy forbids them), bounded at any fleet size. Long lists are folded in
// <details>; a filter box (a few lines of script) shows the rows, plots and folded lists that
// name what is typed. Without script every name is still on the page for the browser's find.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/markup.h"
#include "core/quantity.h"
#include "core/text.h"
#include "fleet/fleet_render.h"
#include "fleet/fleet_report.h"
#include "measure/bench_document.h"

namespace trainrig::fleet {

namespace {

std::string h(std::string_view s) { return html_escape(s); }

constexpr const char* kFleetStyle = R"CSS(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.banner{padding:14px 18px;border-radius:6px;color:#fff;margin-bottom:8px}
.ready{background:#1b7f3b}.warn{background:#b26a00}.fail{background:#b3261e}.unknown{background:#555}
.counts span{display:inline-block;margin:4px 12px 4px 0;padding:4px 10px;border-radius:4px;
background:#f3f3f3}.counts b{font-size:18px;margin-right:4px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.wide{width:100%}
.scroll{overflow-x:auto}.meta{color:#555}code{font-size:12px}
td.s-DRAIN{color:#b3261e;font-weight:600}td.s-DRIFTED{color:#b26a00;font-weight:600}
td.s-UNKNOWN{color:#555;font-weight:600}td.s-READY{color:#1b7f3b}
.heat td.c{text-align:center;min-width:18px;font-size:12px}.c-ok{background:#d3ecd9}
.c-drift{background:#fbe7c6}.c-drain{background:#f6d5d3;color:#b3261e;font-weight:700}
.c-unknown{background:#ddd}.c-none{background:#fff}
.heat th.v{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:400;font-size:12px;
white-space:nowrap;max-height:220px}
details>summary{cursor:pointer;font-weight:600;margin:6px 0}
.plot{margin:6px 0 16px}svg text{font:11px system-ui,sans-serif;fill:#333}
#filter{margin:4px 0;padding:4px 8px;width:320px}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}.plot,tr{break-inside:avoid}
#filter{display:none}.banner,td,.counts span{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
@page{size:A4 landscape;margin:10mm}
)CSS";

// Shows the filter box (hidden without script), then hides every .f element that does not
// contain the text typed, opens the folded lists that hold a match, and counts the nodes shown.
constexpr const char* kFleetFilterScript = R"JS(
var box = document.getElementById('filter'), count = document.getElementById('matches');
box.hidden = false;
box.addEventListener('input', function () {
  var q = box.value.trim().toLowerCase(), nodes = 0;
  document.querySelectorAll('.f').forEach(function (e) {
    var show = !q || e.textContent.toLowerCase().indexOf(q) >= 0;
    e.style.display = show ? '' : 'none';
    if (show && e.classList.contains('node')) nodes++;
  });
  document.querySelectorAll('details.fold').forEach(function (d) {
    d.open = q ? Array.prototype.some.call(d.querySelectorAll('.f'), function (e) {
      return e.style.display !== 'none'; }) : d.hasAttribute('data-open');
  });
  count.textContent = q ? nodes + ' node' + (nodes === 1 ? '' : 's') + ' match' : '';
});
)JS";

const char* banner_class(const FleetResult& r) {
    if (r.count(NodeState::kDrain)) return "fail";
    if (r.count(NodeState::kDrifted)) return "warn";
    if (r.count(NodeState::kUnknown)) return "unknown";
    return "ready";
}

// A folded list, open or not; marked so that the filter restores that when it is cleared.
std::string fold_open(const std::string& summary, bool open) {
    return fmt::format("<details class=\"fold\"{}><summary>{}</summary>\n",
                       open ? " open data-open" : "", summary);
}

std::string drain_section(const FleetResult& r) {
    const size_t n = r.count(NodeState::kDrain);
    std::string s = "<h2 id=\"drain\">Drain list</h2>\n";
    if (n == 0) return s + "<p>No node is to be drained.</p>\n";
    s += "<p class=\"meta\">The nodes to take out of the scheduler, with the reason it is given "
         "(<code>trainrig:&lt;id&gt; &lt;detail&gt;</code>, as <code>trainrig slurm "
         "healthcheck</code> writes it) and every reason.</p>\n";
    s += fold_open(fmt::format("{} node{} to drain", n, n == 1 ? "" : "s"), n <= kOpenRows);
    s += "<table class=\"wide\" id=\"drain-list\"><thead><tr><th>node</th><th>scheduler "
         "reason</th><th>all reasons</th></tr></thead><tbody>\n";
    for (const auto& v : r.nodes)
        if (v.state == NodeState::kDrain)
            s += fmt::format(
                "<tr "
                "class=\"f\"><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>\n",
                h(v.name), h(scheduler_reason(v)), h(join(v.reasons, "; ")));
    return s + "</tbody></table></details>\n";
}

std::string nodes_section(const FleetResult& r) {
    std::string s =
        "<h2 id=\"nodes\">Every node</h2>\n<p class=\"meta\">Each node's state with its reasons, "
        "ids first. Folded lists open when the filter finds a node in them.</p>\n";
    for (NodeState st : kActFirst) {
        const size_t n = r.count(st);
        if (n == 0) continue;
        // READY nodes are listed for the search: open only in a small fleet.
        s += fold_open(fmt::format("{} {} node{}", n, node_state_name(st), n == 1 ? "" : "s"),
                       n <= (st == NodeState::kReady ? kOpenRows / 5 : kOpenRows));
        s += "<table class=\"wide\"><thead><tr><th>node</th><th>state</th><th>its own "
             "verdict</th><th>reasons</th><th>source</th></tr></thead><tbody>\n";
        for (const auto& v : r.nodes)
            if (v.state == st)
                s += fmt::format(
                    "<tr class=\"f node\"><td><code>{}</code></td><td class=\"s-{}\">{}</td>"
                    "<td>{}</td><td>{}</td><td class=\"meta\">{}</td></tr>\n",
                    h(v.name), node_state_name(st), node_state_name(st), h(v.own_verdict),
                    h(join(v.reasons, "; ")), h(v.source));
        s += "</tbody></table></details>\n";
    }
    if (!r.set_aside.empty()) {
        s += "<p class=\"meta\" id=\"set-aside\">Set aside, an older report of a host judged "
             "from its newest:</p><ul class=\"meta\">\n";
        for (const auto& a : r.set_aside)
            s += fmt::format(
                "<li><code>{}</code> {} ({}); its state is {}</li>\n", h(a.name), h(a.source),
                h(a.written_at.empty() ? "written when unknown" : a.written_at), h(a.kept));
        s += "</ul>\n";
    }
    return s;
}

const char* cell_mark(CheckState s) {
    switch (s) {
        case CheckState::kOk:
            return "&#183;";
        case CheckState::kDrifted:
            return "~";
        case CheckState::kDrain:
            return "&#215;";
        case CheckState::kUnknown:
            return "?";
        case CheckState::kAbsent:
            return "";
    }
    return "";
}

std::string heat_section(const FleetResult& r) {
    std::string s =
        "<h2 id=\"heat\">Nodes &#215; checks</h2>\n<p class=\"meta\">A column for each node's own "
        "verdict and each check some node differs on; nodes in the same state on every check "
        "share a row. &#183; as the fleet, ~ drifted, &#215; to drain, ? could not be judged, "
        "blank: not measured. Hover a cell for the node's value.</p>\n";
    const auto rows = heat_rows(r);
    s += "<div class=\"scroll\"><table class=\"heat\"><thead><tr><th>nodes</th><th>state</th>";
    for (const auto& c : r.checks) s += "<th class=\"v\">" + h(c) + "</th>";
    s += "</tr></thead><tbody>\n";
    for (const auto& row : rows) {
        const auto& first = r.nodes[row.nodes.front()];
        std::string who;
        if (row.nodes.size() == 1) {
            who = "<code>" + h(first.name) + "</code>";
        } else {
            std::vector<std::string> names;
            for (size_t i : row.nodes) names.push_back(r.nodes[i].name);
            who = fmt::format(
                "<details class=\"fold\"><summary>{} nodes</summary><code>{}</code></details>",
                row.nodes.size(), h(join(names, " ")));
        }
        s += fmt::format("<tr class=\"f\"><td>{}</td><td class=\"s-{}\">{}</td>", who,
                         node_state_name(row.state), node_state_name(row.state));
        for (size_t c = 0; c < r.checks.size(); ++c) {
            const CheckCell cell = row_cell(r, row, c);
            s += fmt::format("<td class=\"c c-{}\" title=\"{}: {}\">{}</td>",
                             check_state_name(cell.state), h(r.checks[c]),
                             h(cell.text.empty() ? check_state_name(cell.state) : cell.text),
                             cell_mark(cell.state));
        }
        s += "</tr>\n";
    }
    return s + "</tbody></table></div>\n";
}

std::string findings_section(const FleetResult& r) {
    std::string s = "<h2 id=\"findings\">Findings</h2>\n";
    if (r.findings.empty()) return s + "<p>None: no node differs from the fleet.</p>\n";
    s += "<table class=\"wide\"><thead><tr><th>id</th><th>what</th><th>evidence</th></tr>"
         "</thead><tbody>\n";
    for (const auto& f : r.findings) {
        std::string ev;
        const size_t shown = std::min<size_t>(f.evidence.size(), 6);
        for (size_t i = 0; i < shown; ++i) ev += h(f.evidence[i]) + "<br>";
        if (shown < f.evidence.size())
            ev += fmt::format("<span class=\"meta\">{} more in fleet-report.json</span>",
                              f.evidence.size() - shown);
        s += fmt::format("<tr class=\"f\"><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
                         h(f.id), h(f.summary), ev);
    }
    return s + "</tbody></table>\n";
}

// One measurement's values as a histogram of their difference from the median (%), the median,
// the tolerance's edge and the region beyond it shaded, and each flagged value as a red mark.
struct Strip {
    std::string id, title, unit;
    bool higher_is_better = true;
    double median = 0, allowed = 0;
    std::vector<double> values;
    std::vector<std::pair<std::string, double>> flagged;  // who, value
};

std::string strip_plot(const Strip& p) {
    const double W = 680, H = 96, L = 8, R = 8, top = 16, base = 70;
    auto pct = [&](double v) { return p.median != 0 ? 100 * (v - p.median) / p.median : 0.0; };
    const double edge = p.median != 0 ? 100 * p.allowed / std::fabs(p.median) : 0;
    const double bad_edge = p.higher_is_better ? -edge : edge;
    double lo = std::min(-1.5 * edge, -0.5), hi = std::max(1.5 * edge, 0.5);
    for (double v : p.values) {
        lo = std::min(lo, pct(v));
        hi = std::max(hi, pct(v));
    }
    const double pad = 0.03 * (hi - lo);
    lo -= pad;
    hi += pad;
    auto X = [&](double q) { return L + (W - L - R) * (q - lo) / (hi - lo); };
    constexpr int kBins = 80;
    std::vector<size_t> bins(kBins, 0);
    for (double v : p.values)
        ++bins[static_cast<size_t>(
            std::clamp(static_cast<int>((pct(v) - lo) / (hi - lo) * kBins), 0, kBins - 1))];
    const size_t most = std::max<size_t>(1, *std::max_element(bins.begin(), bins.end()));
    std::string s = fmt::format(
        "<div class=\"plot f\" data-id=\"{0}\"><b>{1}</b><br><svg width=\"{2}\" height=\"{3}\" "
        "role=\"img\" aria-label=\"{1}\">",
        h(p.id), h(p.title), W, H);
    const double bx = X(bad_edge);
    s += p.higher_is_better ? fmt::format(
                                  "<rect class=\"beyond\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
                                  "height=\"{}\" fill=\"#f6d5d3\"/>",
                                  L, top, std::max(bx - L, 0.0), base - top)
                            : fmt::format(
                                  "<rect class=\"beyond\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
                                  "height=\"{}\" fill=\"#f6d5d3\"/>",
                                  bx, top, std::max(W - R - bx, 0.0), base - top);
    const double bw = (W - L - R) / kBins;
    for (int b = 0; b < kBins; ++b) {
        if (bins[static_cast<size_t>(b)] == 0) continue;
        const double bh =
            std::max(2.0, (base - top) * static_cast<double>(bins[static_cast<size_t>(b)]) /
                              static_cast<double>(most));
        s += fmt::format(
            "<rect class=\"bin\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
            "height=\"{:.1f}\" fill=\"#4a78a8\"><title>{}</title></rect>",
            L + b * bw, base - bh, std::max(bw - 0.5, 0.5), bh, bins[static_cast<size_t>(b)]);
    }
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#999\"/>"
        "<line class=\"median\" x1=\"{3:.1f}\" x2=\"{3:.1f}\" y1=\"{4}\" y2=\"{2}\" "
        "stroke=\"#000\"/>"
        "<line class=\"edge\" x1=\"{5:.1f}\" x2=\"{5:.1f}\" y1=\"{4}\" y2=\"{2}\" "
        "stroke=\"#b3261e\" "
        "stroke-dasharray=\"3,2\"/>",
        L, W - R, base, X(0), top - 4, bx);
    for (const auto& [who, v] : p.flagged)
        s += fmt::format(
            "<circle class=\"flagged\" cx=\"{:.1f}\" cy=\"{}\" r=\"3\" "
            "fill=\"#b3261e\"><title>{}: {}</title></circle>",
            X(pct(v)), base + 5, h(who), h(format_quantity(v, p.unit)));
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"10\" text-anchor=\"middle\">median {}</text>"
        "<text x=\"{}\" y=\"{}\">{:+.1f} %</text><text x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\">{:+.1f} %</text></svg>",
        X(0), h(format_quantity(p.median, p.unit)), L, H - 4, lo, W - R, H - 4, hi);
    s += fmt::format(
        "<div class=\"meta\">{} values; beyond the dashed line ({:+.1f} %) is an "
        "outlier",
        p.values.size(), bad_edge);
    if (!p.flagged.empty()) {
        std::vector<std::string> who;
        for (size_t i = 0; i < p.flagged.size() && i < 12; ++i)
            who.push_back(
                fmt::format("{} ({:+.1f} %)", p.flagged[i].first, pct(p.flagged[i].second)));
        s += fmt::format(": <b>{}</b>{}", h(join(who, ", ")),
                         p.flagged.size() > 12 ? fmt::format(" and {} more", p.flagged.size() - 12)
                                               : std::string());
    }
    return s + "</div></div>\n";
}

std::string plots_section(const FleetResult& r) {
    std::vector<const MeasurementSpread*> judged;
    size_t unjudged = 0;
    for (const auto& m : r.measurements) {
        if (m.judged)
            judged.push_back(&m);
        else
            ++unjudged;
    }
    if (judged.empty() && unjudged == 0) return "";
    std::stable_sort(judged.begin(), judged.end(), [](const auto* a, const auto* b) {
        return !a->flagged.empty() && b->flagged.empty();
    });
    std::string s =
        "<h2 id=\"plots\">Measurements across the fleet</h2>\n<p class=\"meta\">Each "
        "measurement's values on every node and GPU, as their difference from the fleet's median: "
        "how many fall in each band (blue), the median (black), the tolerance's edge (dashed: "
        "3 robust standard deviations, at least the minimum deviation) and the outliers (red). "
        "Measurements with outliers first.</p>\n";
    for (const auto* m : judged) {
        Strip p{m->id,
                m->label + (m->params.empty() ? "" : " (" + m->params + ")") + ", " + m->unit,
                m->unit,
                m->higher_is_better,
                m->median,
                m->allowed,
                m->values,
                {}};
        for (const auto& f : m->flagged)
            p.flagged.emplace_back(f.node + (f.device.empty() ? "" : " " + f.device), f.value);
        s += strip_plot(p);
    }
    if (unjudged)
        s += fmt::format(
            "<p class=\"meta\">{} measurement{} on fewer nodes than the statistics "
            "need: not judged.</p>\n",
            unjudged, unjudged == 1 ? "" : "s");
    return s;
}

// The node-pair matrix: every pair measured between the nodes shown (all of them in a small
// fleet; in a large one, those in a slow pair), coloured by its value against the threshold.
std::string pair_matrix(const FleetResult& r, const FleetPairs& p) {
    constexpr size_t kMaxShown = 64;
    std::vector<int> shown;
    std::vector<bool> in_pair(r.nodes.size(), false), in_slow(r.nodes.size(), false);
    for (const auto* list : {&p.results, &p.retests})
        for (const auto& x : *list)
            for (int i : {x.pair.first, x.pair.second}) {
                in_pair[static_cast<size_t>(i)] = true;
                if (p.judged && x.value < p.judgement.threshold)
                    in_slow[static_cast<size_t>(i)] = true;
            }
    const size_t measured = static_cast<size_t>(std::count(in_pair.begin(), in_pair.end(), true));
    const auto& pick = measured <= kMaxShown ? in_pair : in_slow;
    for (size_t i = 0; i < r.nodes.size() && shown.size() < kMaxShown; ++i)
        if (pick[i]) shown.push_back(static_cast<int>(i));
    const size_t wanted = static_cast<size_t>(std::count(pick.begin(), pick.end(), true));
    std::string s;
    if (measured > kMaxShown)
        s += fmt::format(
            "<p class=\"meta\">{} nodes measured in pairs; the matrix shows the {} "
            "in a slow pair{}.</p>\n",
            measured, shown.size(),
            wanted > shown.size() ? fmt::format(" (the first {} of {})", shown.size(), wanted)
                                  : std::string());
    if (shown.empty()) return s;
    std::vector<int> pos(r.nodes.size(), -1);
    for (size_t k = 0; k < shown.size(); ++k)
        pos[static_cast<size_t>(shown[k])] = static_cast<int>(k);
    const double cell = std::clamp(560.0 / static_cast<double>(shown.size()), 6.0, 16.0);
    const double label = 120, size = label + cell * static_cast<double>(shown.size());
    s += fmt::format(
        "<svg class=\"pairs\" width=\"{0:.0f}\" height=\"{0:.0f}\" role=\"img\" "
        "aria-label=\"node-pair matrix\">",
        size + 4);
    for (size_t k = 0; k < shown.size(); ++k) {
        const double at = label + cell * static_cast<double>(k) + cell * 0.75;
        const std::string name = h(r.nodes[static_cast<size_t>(shown[k])].name);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", label - 4,
                         at, name);
        s += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\">{}</text>", at,
                         label - 4, name);
    }
    for (const auto* list : {&p.results, &p.retests})
        for (const auto& x : *list) {
            const int a = pos[static_cast<size_t>(x.pair.first)];
            const int b = pos[static_cast<size_t>(x.pair.second)];
            if (a < 0 || b < 0) continue;
            const bool slow = p.judged && x.value < p.judgement.threshold;
            for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}})
                s += fmt::format(
                    "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                    "height=\"{:.1f}\" fill=\"{}\"><title>{} - {}: {}</title></rect>",
                    slow ? "slow" : "fast", label + cell * col, label + cell * row, cell - 1,
                    cell - 1, slow ? "#d9534f" : "#7fbf8e",
                    h(r.nodes[static_cast<size_t>(x.pair.first)].name),
                    h(r.nodes[static_cast<size_t>(x.pair.second)].name),
                    h(format_quantity(x.value, p.unit)));
        }
    return s + "</svg>\n";
}

std::string pairs_section(const FleetResult& r) {
    if (!r.pairs) return "";
    const FleetPairs& p = *r.pairs;
    std::string s = fmt::format(
        "<h2 id=\"pairs\">Node pairs: {}</h2>\n<p class=\"meta\">{} pairs and {} re-tests from "
        "<code>{}</code>.",
        h(p.label), p.results.size(), p.retests.size(), h(p.source));
    if (!p.judged) return s + " Too few pairs to judge.</p>\n" + pair_matrix(r, p);
    s += fmt::format(
        " Median {}; a pair below {} is slow ({} of them). Green: at full speed; "
        "red: slow; blank: not measured.</p>\n",
        h(format_quantity(p.judgement.median, p.unit)),
        h(format_quantity(p.judgement.threshold, p.unit)), p.judgement.slow.size());
    std::vector<double> values;
    for (const auto& x : p.results) values.push_back(x.value);
    Strip strip{"pairs",
                p.label + ", every pair",
                p.unit,
                true,
                p.judgement.median,
                p.judgement.median - p.judgement.threshold,
                values,
                {}};
    for (const auto& x : p.results)
        if (x.value < p.judgement.threshold)
            strip.flagged.emplace_back(r.nodes[static_cast<size_t>(x.pair.first)].name + " - " +
                                           r.nodes[static_cast<size_t>(x.pair.second)].name,
                                       x.value);
    return s + strip_plot(strip) + pair_matrix(r, p);
}

}  // namespace

std::string render_fleet_html(const FleetResult& r) {
    const std::string line = fleet_line(r);
    std::string s = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        "<meta name=\"viewport\" content=\"width=device-width\">"
        "<title>{} — trainrig fleet</title><style>{}</style></head><body>\n",
        h(line), kFleetStyle);
    s += fmt::format("<div class=\"banner {}\" id=\"verdict\"><h1>{}</h1></div>\n", banner_class(r),
                     h(line));
    s += "<p class=\"counts\">";
    for (NodeState st :
         {NodeState::kReady, NodeState::kDrain, NodeState::kDrifted, NodeState::kUnknown})
        s += fmt::format("<span id=\"count-{0}\"><b>{1}</b>{0}</span>", node_state_name(st),
                         r.count(st));
    s += fmt::format("</p>\n<p class=\"meta\">Exit code {}: {}.</p>\n", r.exit_code(),
                     r.exit_code() == 2   ? "a node could not be judged"
                     : r.exit_code() == 1 ? "a node is to be drained or has drifted"
                                          : "every node is ready");
    s += "<input id=\"filter\" hidden placeholder=\"filter: a node, a check id, a value\" "
         "aria-label=\"filter\"> <span id=\"matches\" class=\"meta\"></span>\n"
         "<noscript><p class=\"meta\">Every node's name is on this page: the browser's find "
         "searches them, folded lists included.</p></noscript>\n";
    s += drain_section(r) + heat_section(r) + findings_section(r) + plots_section(r) +
         pairs_section(r) + nodes_section(r);
    s += std::string("<script>") + kFleetFilterScript + "</script>\n</body></html>\n";
    return s;
}

}  // namespace trainrig::fleet

#include "validate/report_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/markup.h"
#include "core/quantity.h"
#include "measure/bench_document.h"
#include "validate/report_coverage.h"
#include "validate/report_training.h"

namespace trainrig::validate {

namespace {

using nlohmann::json;

std::string devices(const json& item) {
    std::vector<std::string> d;
    for (const auto& x : item.value("devices", json::array())) d.push_back(x.get<std::string>());
    return join(d, ", ");
}

std::string level_mark(const std::string& level) {
    return level == "fail" ? "FAIL" : level == "warn" ? "WARN" : "UNKNOWN";
}

// Per GPU over the run: samples, hottest, SM clock range, most power.
struct GpuRun {
    size_t samples = 0;
    double t_max = -1e9, clock_min = 1e18, clock_max = 0, power_max = 0;
};
std::map<int, GpuRun> gpu_runs(const json& watch) {
    std::map<int, GpuRun> out;
    for (const auto& s : watch.value("samples", json::array())) {
        GpuRun& g = out[s.value("gpu", 0)];
        ++g.samples;
        if (s.contains("temperature_celsius"))
            g.t_max = std::max(g.t_max, s["temperature_celsius"].get<double>());
        if (s.contains("sm_clock_hertz")) {
            g.clock_min = std::min(g.clock_min, s["sm_clock_hertz"].get<double>());
            g.clock_max = std::max(g.clock_max, s["sm_clock_hertz"].get<double>());
        }
        if (s.contains("power_watts"))
            g.power_max = std::max(g.power_max, s["power_watts"].get<double>());
    }
    return out;
}

}  // namespace

std::string baseline_line(const json& r) {
    const auto b = r.find("baseline");
    if (b == r.end() || !b->is_object()) return {};
    return fmt::format(
        "against the baseline {} ({}, {} level, {}): {} of its {} measurements "
        "matched",
        report_text(*b, "path"), report_text(*b, "host", "unknown host"), report_text(*b, "level"),
        report_text(*b, "finished_at"), b->value("matched", 0), b->value("measurements", 0));
}

std::string report_text(const json& j, const char* key, const std::string& none) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : none;
}

bool telemetry_shown(const json& r) {
    if (!r.contains("watch")) return false;
    for (const auto& s : r.value("stages", json::array()))
        if (report_text(s, "name") == "watch") return report_text(s, "state") != "skipped";
    return true;
}

ItemColumns item_columns(const json& items) {
    ItemColumns c;
    for (const auto& i : items) {
        c.where = c.where || !devices(i).empty();
        c.measured = c.measured || !report_text(i, "measured").empty() ||
                     !report_text(i, "expected").empty();
    }
    return c;
}

std::string training_line(const json& r) {
    const auto b = r.find("bench");
    if (b == r.end() || !b->is_object()) return "";
    const auto results = b->find("results");
    if (results == b->end() || !results->is_array()) return "";
    const json* tokens = nullptr;  // points into the report, which outlives it
    for (const auto& rec : *results)
        if (rec.is_object() && rec.value("bench", "") == "train" &&
            rec.value("name", "") == "tokens")
            tokens = &rec;
    if (!tokens) return "";
    const json counted = tokens->value("counted", json::object());
    const json params = tokens->value("params", json::object());
    return fmt::format("training: loss {:.3f} -> {:.3f} over {} steps, {}{} ({} backend, model {})",
                       counted.value("first_loss", 0.0), counted.value("last_loss", 0.0),
                       params.value("warmup_steps", 0) + params.value("timed_steps", 0),
                       format_quantity(tokens->value("median", 0.0), "tokens/s"),
                       tokens->value("partial", false) ? ", stopped before it finished" : "",
                       params.value("backend", "?"), params.value("model", "?"));
}

std::string render_report_text(const json& r, const std::string& report_dir, bool verbose) {
    std::string out = report_text(r, "verdict_line") + "\n";
    const auto& items = r.value("items", json::array());
    size_t shown = 0;
    for (const auto& i : items) {
        if (!verbose && shown == 10) {
            out += fmt::format("  ... and {} more in the report\n", items.size() - shown);
            break;
        }
        ++shown;
        const std::string where = devices(i);
        out += fmt::format("  {:<7} {}{}: {}\n", level_mark(report_text(i, "level")),
                           report_text(i, "id"), where.empty() ? "" : " [" + where + "]",
                           report_text(i, "summary"));
        if (!report_text(i, "expected").empty())
            out += fmt::format("          measured {}, expected {} ({}; {})\n",
                               report_text(i, "measured"), report_text(i, "expected"),
                               report_text(i, "tolerance"), report_text(i, "source"));
        if (!report_text(i, "action").empty())
            out += "          -> " + report_text(i, "action") + "\n";
    }
    if (const std::string t = training_line(r); !t.empty()) out += "  " + t + "\n";
    out += coverage_text(r);
    if (verbose && r.contains("bench")) {
        const auto& results = r["bench"].value("results", json::array());
        if (!results.empty()) out += "  measurements:\n";
        for (const auto& rec : results) {
            const std::string unit = report_text(rec, "unit");
            const auto& e = rec.value("expected", json());
            out += fmt::format("    {:<10} {:<14} {:>14}  expected {:>14}  {}\n",
                               report_text(rec, "bench"), report_text(rec, "name"),
                               format_quantity(rec.value("median", 0.0), unit),
                               e.is_number() ? format_quantity(e.get<double>(), unit) : "-",
                               report_text(rec, "status"));
        }
    }
    for (const auto& s : r.value("stages", json::array()))
        if (verbose || report_text(s, "state") != "ran")
            out += fmt::format(
                "  stage {:<11} {}{}\n", report_text(s, "name"), report_text(s, "state"),
                report_text(s, "reason").empty() ? "" : ": " + report_text(s, "reason"));
    if (const std::string b = baseline_line(r); !b.empty()) out += b + "\n";
    if (!report_dir.empty()) out += "report: " + report_dir + "\n";
    return out;
}

std::string render_report_markdown(const json& r) {
    std::string md = fmt::format("# {}\n\n", report_text(r, "verdict_line"));
    md += fmt::format("Host `{}`, level `{}`, {} to {} ({:.0f} s).  \nCommand: `{}`\n\n",
                      report_text(r, "host", "unknown"), report_text(r, "level"),
                      report_text(r, "started_at"), report_text(r, "finished_at"),
                      r.value("seconds", 0.0), [&] {
                          std::vector<std::string> argv;
                          for (const auto& a : r.value("command_line", json::array()))
                              argv.push_back(a.get<std::string>());
                          return join(argv, " ");
                      }());
    if (const std::string b = baseline_line(r); !b.empty()) md += "Measured " + b + ".\n\n";
    const auto& items = r.value("items", json::array());
    md += "## What to do first\n\n";
    if (items.empty()) {
        md += "Nothing: every check that ran passed.\n\n";
    } else {
        const ItemColumns cols = item_columns(items);
        md += std::string("| level | id |") + (cols.where ? " where |" : "") + " what |" +
              (cols.measured ? " measured | expected |" : "") + " action |\n|---|---|" +
              (cols.where ? "---|" : "") + "---|" + (cols.measured ? "---|---|" : "") + "---|\n";
        for (const auto& i : items) {
            md += fmt::format("| {} | `{}` |", level_mark(report_text(i, "level")),
                              report_text(i, "id"));
            if (cols.where) md += " " + markdown_cell(devices(i)) + " |";
            md += " " + markdown_cell(report_text(i, "summary")) + " |";
            if (cols.measured)
                md += " " + markdown_cell(report_text(i, "measured")) + " | " +
                      markdown_cell(report_text(i, "expected").empty()
                                        ? ""
                                        : report_text(i, "expected") + " (" +
                                              report_text(i, "source") + ")") +
                      " |";
            md += " " + markdown_cell(report_text(i, "action")) + " |\n";
        }
        md += "\n";
    }
    md += coverage_markdown(r);
    md += "## Stages\n\n| stage | state | seconds | budget | note |\n|---|---|---|---|---|\n";
    for (const auto& s : r.value("stages", json::array()))
        md += fmt::format("| {} | {} | {:.1f} | {:.0f} | {} |\n", report_text(s, "title"),
                          report_text(s, "state"), s.value("seconds", 0.0),
                          s.value("budget_seconds", 0.0), markdown_cell(report_text(s, "reason")));
    md += "\n";
    if (r.contains("bench")) {
        md +=
            "## Measurements\n\n| benchmark | measurement | median | expected | status |\n"
            "|---|---|---|---|---|\n";
        for (const auto& rec : r["bench"].value("results", json::array())) {
            const std::string unit = report_text(rec, "unit");
            const auto& e = rec["expected"];
            md += fmt::format("| {} | {} | {} | {} | {} |\n", report_text(rec, "bench"),
                              report_text(rec, "name"),
                              format_quantity(rec.value("median", 0.0), unit),
                              e.is_number() ? format_quantity(e.get<double>(), unit) : "-",
                              report_text(rec, "status"));
        }
        md += "\n";
    }
    md += training_markdown(r);
    if (telemetry_shown(r)) {
        const auto runs = gpu_runs(r["watch"]);
        md += fmt::format("## GPU telemetry\n\n{} ticks, {} alerts.\n\n",
                          r["watch"].value("ticks", 0), r["watch"]["alerts"].size());
        if (!runs.empty()) {
            md += "| GPU | samples | hottest | SM clock | most power |\n|---|---|---|---|---|\n";
            for (const auto& [gpu, g] : runs)
                md += fmt::format("| {} | {} | {:.0f} °C | {:.0f}-{:.0f} MHz | {:.0f} W |\n", gpu,
                                  g.samples, g.t_max, g.clock_min / 1e6, g.clock_max / 1e6,
                                  g.power_max);
            md += "\n";
        }
    }
    if (r.contains("versions")) {
        md += "## Versions\n\n";
        for (const auto& [k, v] : r["versions"].items())
            md += fmt::format("- {}: {}\n", k,
                              v.is_null()     ? "unknown"
                              : v.is_string() ? v.get<std::string>()
                                              : v.dump());
        md += "\n";
    }
    if (r.contains("doctor")) {
        const auto& s = r["doctor"].value("summary", json::object());
        md += fmt::format(
            "## Configuration checks\n\n{} pass, {} warn, {} fail, {} error, {} skip; "
            "every finding with its evidence is in `report.json`.\n",
            s.value("pass", 0), s.value("warn", 0), s.value("fail", 0), s.value("error", 0),
            s.value("skip", 0));
    }
    return md;
}

}  // namespace trainrig::validate

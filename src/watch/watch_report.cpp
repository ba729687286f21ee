#include "watch/watch_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "core/quantity.h"
#include "measure/bench_record.h"
#include "nvml/nvml_api.h"

namespace trainrig::watch {
namespace {

constexpr double kBusy = 0.5;         // node median utilization that counts as busy
constexpr double kSkewPoints = 0.20;  // the utilization-skew rule's default
constexpr double kMaxGap = 60;        // a gap longer than this between ticks was not watched

std::string utc(double epoch) {
    const auto t = static_cast<time_t>(epoch);
    tm parts{};
    gmtime_r(&t, &parts);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &parts);
    return buf;
}

nlohmann::json spread_json(const Spread& s) {
    if (s.n == 0) return nullptr;
    return {{"samples", s.n},
            {"min", s.min},
            {"median", s.median},
            {"max", s.max},
            {"stddev", s.stddev}};
}

}  // namespace

Spread spread_of(std::vector<double> v) {
    Spread s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    s.median = bench::median_of(v);
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    s.stddev = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0;
    return s;
}

Result<WatchReport> build_report(History& history, const std::string& db, double since,
                                 double until) {
    auto samples = history.samples_since(since);
    if (!samples) return samples.status();
    auto alerts = history.alerts_since(since);
    if (!alerts) return alerts.status();
    auto ids = history.gpus();
    if (!ids) return ids.status();
    WatchReport r;
    r.db = db;
    r.since = since;
    r.until = until;
    r.timeline = std::move(alerts).value();
    std::map<unsigned, std::vector<const StoredSample*>> per_gpu;
    std::map<double, std::vector<const StoredSample*>> per_tick;
    for (const auto& s : *samples) {
        if (s.time > until) break;
        per_gpu[s.gpu].push_back(&s);
        per_tick[s.time].push_back(&s);
    }
    if (!per_tick.empty()) {
        r.first = per_tick.begin()->first;
        r.last = per_tick.rbegin()->first;
    }
    // Skew: each busy tick, every GPU's distance from the node's median.
    std::map<unsigned, std::vector<double>> off;
    for (const auto& [t, tick] : per_tick) {
        std::vector<double> u;
        for (const auto* s : tick)
            if (s->utilization && s->state == GpuState::kOk) u.push_back(*s->utilization);
        if (u.size() < 2) continue;
        const double med = bench::median_of(u);
        if (med <= kBusy) continue;
        for (const auto* s : tick)
            if (s->utilization && s->state == GpuState::kOk)
                off[s->gpu].push_back(std::fabs(*s->utilization - med));
    }
    for (const auto& [gpu, list] : per_gpu) {
        GpuSummary g;
        g.id.index = gpu;
        for (const auto& id : *ids)
            if (id.index == gpu) g.id = id;
        g.samples = list.size();
        std::vector<double> temp, util;
        double energy = 0;
        bool have_energy = false;
        for (size_t i = 0; i < list.size(); ++i) {
            const StoredSample& s = *list[i];
            if (s.temperature) temp.push_back(*s.temperature);
            if (s.utilization) util.push_back(*s.utilization);
            const double dt =
                i + 1 < list.size() ? std::min(list[i + 1]->time - s.time, kMaxGap) : 0;
            if (s.state != GpuState::kOk) g.not_ok_seconds += dt;
            if (s.clock_event_reasons) {
                const uint64_t bits = *s.clock_event_reasons;
                if (bits &
                    (nvml::kClocksEventSwThermalSlowdown | nvml::kClocksEventHwThermalSlowdown))
                    g.thermal_slowdown_seconds += dt;
                if (bits & nvml::kClocksEventSwPowerCap) g.power_cap_seconds += dt;
                if (bits & (nvml::kClocksEventHwSlowdown | nvml::kClocksEventHwPowerBrakeSlowdown))
                    g.hw_slowdown_seconds += dt;
            }
            // Energy is a counter since the driver loaded: sum the rises, skip a reset.
            if (i > 0 && s.energy && list[i - 1]->energy && *s.energy >= *list[i - 1]->energy) {
                energy += *s.energy - *list[i - 1]->energy;
                have_energy = true;
            }
        }
        g.temperature = spread_of(std::move(temp));
        g.utilization = spread_of(std::move(util));
        if (have_energy) g.energy_joules = energy;
        const auto& o = off[gpu];
        g.busy_ticks = o.size();
        if (!o.empty()) {
            double sum = 0;
            size_t far = 0;
            for (double d : o) {
                sum += d;
                far += d > kSkewPoints;
            }
            g.skew_mean = sum / static_cast<double>(o.size());
            g.skew_ratio = static_cast<double>(far) / static_cast<double>(o.size());
        }
        r.gpus.push_back(std::move(g));
    }
    return r;
}

nlohmann::json report_json(const WatchReport& r) {
    nlohmann::json j = {{"schema", "trainrig.watch.report"},
                        {"schema_version", 1},
                        {"db", r.db},
                        {"since", r.since},
                        {"until", r.until},
                        {"first_tick", r.first},
                        {"last_tick", r.last}};
    j["gpus"] = nlohmann::json::array();
    for (const auto& g : r.gpus) {
        nlohmann::json x = {{"gpu", g.id.index},
                            {"uuid", g.id.uuid},
                            {"name", g.id.name},
                            {"pci_bus_id", g.id.bus_id},
                            {"samples", g.samples},
                            {"temperature_celsius", spread_json(g.temperature)},
                            {"utilization", spread_json(g.utilization)},
                            {"busy_ticks", g.busy_ticks},
                            {"skew_mean", g.skew_mean},
                            {"skew_ratio", g.skew_ratio},
                            {"thermal_slowdown_seconds", g.thermal_slowdown_seconds},
                            {"power_cap_seconds", g.power_cap_seconds},
                            {"hw_slowdown_seconds", g.hw_slowdown_seconds},
                            {"not_ok_seconds", g.not_ok_seconds}};
        if (g.energy_joules) x["energy_joules"] = *g.energy_joules;
        j["gpus"].push_back(std::move(x));
    }
    j["alerts"] = nlohmann::json::array();
    for (const auto& a : r.timeline) j["alerts"].push_back(nlohmann::json::parse(alert_json(a)));
    return j;
}

std::string render_report_text(const WatchReport& r) {
    std::string out;
    if (r.gpus.empty()) return fmt::format("{}: no ticks stored in the period asked for\n", r.db);
    out += fmt::format("{}: {} watched, {} to {} ({})\n", r.db, format_duration(r.last - r.first),
                       utc(r.first), utc(r.last), plural(r.gpus.size(), "GPU"));
    out += fmt::format("{:<4} {:>23} {:>7} {:>19} {:>11} {:>10} {:>10} {:>9}\n", "GPU",
                       "temperature min/med/max", "std-dev", "utilization med/max", "skew mean",
                       "thermal", "power cap", "energy");
    for (const auto& g : r.gpus) {
        const std::string temp = g.temperature.n
                                     ? fmt::format("{:.0f}/{:.0f}/{:.0f} C", g.temperature.min,
                                                   g.temperature.median, g.temperature.max)
                                     : "-";
        const std::string sd =
            g.temperature.n ? fmt::format("±{:.1f} C", g.temperature.stddev) : "-";
        const std::string util = g.utilization.n
                                     ? fmt::format("{:.0f}/{:.0f} %", g.utilization.median * 100,
                                                   g.utilization.max * 100)
                                     : "-";
        const std::string skew = g.busy_ticks ? fmt::format("{:.0f} pts", g.skew_mean * 100) : "-";
        out +=
            fmt::format("{:<4} {:>23} {:>7} {:>19} {:>11} {:>9.0f}s {:>9.0f}s {:>9}\n", g.id.index,
                        temp, sd, util, skew, g.thermal_slowdown_seconds, g.power_cap_seconds,
                        g.energy_joules ? format_energy(*g.energy_joules) : "-");
    }
    out += fmt::format("alerts: {}\n", r.timeline.size());
    for (const auto& a : r.timeline)
        out += fmt::format("  {} {} {} [{}]: {}\n", utc(a.at), a.firing ? "FIRING  " : "resolved",
                           a.rule, severity_name(a.severity), a.summary);
    return out;
}

}  // namespace trainrig::watch

#include "watch/alert_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "doctor/xid_catalog.h"
#include "measure/bench_record.h"
#include "watch/watch_view.h"

namespace trainrig::watch {
namespace {

// A value as people read it: ratios in percent, clocks in MHz.
std::string shown(Field f, double v) {
    const FieldInfo& i = field_info(f);
    switch (f) {
        case Field::kUtilization:
        case Field::kMemoryUtilization:
        case Field::kMemoryUsedRatio:
        case Field::kPowerRatio:
            return fmt::format("{:.0f} %", v * 100);
        case Field::kSmClock:
        case Field::kMemoryClock:
            return fmt::format("{:.0f} MHz", v / 1e6);
        default:
            return fmt::format("{:g}{}", std::round(v * 10) / 10, i.unit);
    }
}

std::string span(double seconds) {
    if (seconds < 120) return fmt::format("{:.0f} s", seconds);
    if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
    return fmt::format("{:.1f} h", seconds / 3600);
}

// ", for 30 s" after a condition that must hold that long; nothing for one judged at once, where
// "for 0 s" would read as "not at all".
std::string held_for(double seconds) {
    return seconds > 0 ? ", for " + span(seconds) : std::string();
}

// A threshold alert's sentence. A 0/1 flag set says what the flag means, not "1 above 0.5".
std::string threshold_summary(const Rule& r, const std::string& where, double v,
                              double for_seconds) {
    const FieldInfo& info = field_info(r.field);
    if (info.when_set != nullptr && !r.below && r.limit >= 0 && r.limit < 1)
        return fmt::format(
            "{}: {}{}", where, info.when_set,
            for_seconds > 0 ? fmt::format(" (for at least {})", span(for_seconds)) : std::string());
    const char* side = r.below ? "below" : "above";
    if (for_seconds <= 0)
        return fmt::format("{}: {} {} is {} {}", where, info.what, shown(r.field, v), side,
                           shown(r.field, r.limit));
    return fmt::format("{}: {} {} has been {} {} for {}", where, info.what, shown(r.field, v), side,
                       shown(r.field, r.limit), span(for_seconds));
}

std::string where(int gpu, const std::vector<GpuIdentity>& ids) {
    if (gpu < 0) return "this node";
    const auto i = static_cast<size_t>(gpu);
    if (i < ids.size() && !ids[i].uuid.empty()) return fmt::format("GPU {} ({})", gpu, ids[i].uuid);
    return fmt::format("GPU {}", gpu);
}

Alert draft(const Rule& r, int gpu, const std::vector<GpuIdentity>& ids) {
    Alert a;
    a.rule = r.name;
    a.check = r.doctor_rule;
    a.severity = r.severity;
    a.gpu = gpu;
    if (gpu >= 0 && static_cast<size_t>(gpu) < ids.size()) {
        a.uuid = ids[static_cast<size_t>(gpu)].uuid;
        a.device = ids[static_cast<size_t>(gpu)].bus_id;
    }
    a.remedy = r.remedy;
    return a;
}

std::string key_of(const Rule& r, const std::string& rest) { return r.name + "/" + rest; }

// The event as an Xid rule sees it: the code, and the device as the Xid line names it
// ("0000:41:00", where the plain "fallen off the bus" line says "0000:41:00.0").
std::pair<int, std::string> as_xid(const Rule& r, const KernelEvent& e) {
    if (e.kind == KernelEvent::Kind::kXid) return {e.xid, e.device};
    if (r.event != EventKind::kXid) return {0, e.device};
    const auto dot = e.device.rfind('.');
    return {kXidFallenOffBus, dot == std::string::npos || dot + 2 != e.device.size()
                                  ? e.device
                                  : e.device.substr(0, dot)};
}

bool xid_selected(const std::string& sel, int code) {
    if (sel == "any") return true;
    const XidInfo* info = find_xid(code);
    const bool fatal = info && info->severity == XidSeverity::kFatal;
    if (sel == "fatal") return fatal;
    if (sel == "nonfatal") return !fatal;
    size_t pos = 0;
    while (pos <= sel.size()) {
        size_t comma = sel.find(',', pos);
        if (comma == std::string::npos) comma = sel.size();
        std::string item = sel.substr(pos, comma - pos);
        item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
        if (!item.empty() && item == std::to_string(code)) return true;
        pos = comma + 1;
    }
    return false;
}

bool event_matches(const Rule& r, const KernelEvent& e) {
    switch (r.event) {
        case EventKind::kXid:  // the plain "fallen off the bus" line is its Xid 79
            return (e.kind == KernelEvent::Kind::kXid && xid_selected(r.xids, e.xid)) ||
                   (e.kind == KernelEvent::Kind::kFallenOffBus &&
                    xid_selected(r.xids, kXidFallenOffBus));
        case EventKind::kFallenOffBus:
            return e.kind == KernelEvent::Kind::kFallenOffBus;
        case EventKind::kAerUncorrected:
            return e.kind == KernelEvent::Kind::kAerNonFatal ||
                   e.kind == KernelEvent::Kind::kAerFatal;
        case EventKind::kAerFatal:
            return e.kind == KernelEvent::Kind::kAerFatal;
        case EventKind::kAerNonFatal:
            return e.kind == KernelEvent::Kind::kAerNonFatal;
        case EventKind::kAerCorrected:
            return e.kind == KernelEvent::Kind::kAerCorrected;
        default:
            return false;
    }
}

}  // namespace

void AlertEngine::condition(const std::string& key, bool holds, double now, double for_seconds,
                            int samples, Alert a, std::vector<Alert>& out) {
    Track& t = tracks_[key];
    if (holds) {
        if (t.since < 0) t.since = now;
        ++t.held;
        t.clear = 0;
        if (!t.firing && now - t.since >= for_seconds && t.held >= samples) {
            t.firing = true;
            a.firing = true;
            a.since = t.since;
            a.at = now;
            t.alert = a;
            out.push_back(a);
        } else if (t.firing) {
            t.alert.value = a.value;
        }
        return;
    }
    t.held = 0;
    if (!t.firing) {
        t.since = -1;
        return;
    }
    if (++t.clear < samples) return;  // perhaps one odd reading: it still fires
    t.since = -1;
    t.clear = 0;
    t.firing = false;
    Alert r = t.alert;
    r.firing = false;
    r.at = now;
    r.value = a.value;
    r.summary = "resolved after " + span(now - r.since) + ": " + r.summary;
    out.push_back(r);
}

void AlertEngine::threshold(const Rule& r, const NodeSample& tick,
                            const std::vector<GpuIdentity>& ids, std::vector<Alert>& out) {
    // Links right after boot: neither fires nor resolves, as a value not reported.
    if (settles_after_boot(r.field) && policy::links_may_be_training(tick.uptime_seconds)) return;
    for (const auto& g : tick.gpus) {
        const auto v = field_value(g, r.field);
        if (!v) continue;  // not reported (or the GPU is lost): neither fires nor resolves
        const bool holds = r.below ? *v < r.limit : *v > r.limit;
        const double for_seconds = instant_ ? 0 : r.for_seconds;
        Alert a = draft(r, static_cast<int>(g.index), ids);
        a.value = *v;
        a.summary = threshold_summary(r, where(a.gpu, ids), *v, for_seconds);
        if (r.field == Field::kTemperatureVerdict) {  // say it in degrees
            a.value = g.temperature_celsius;
            a.summary = fmt::format(
                "{}: temperature {} °C, slowdown at {} °C, maximum operating {} °C{}",
                where(a.gpu, ids), *g.temperature_celsius,
                g.temperature_slowdown_celsius ? fmt::format("{}", *g.temperature_slowdown_celsius)
                                               : "?",
                g.temperature_max_operating_celsius
                    ? fmt::format("{}", *g.temperature_max_operating_celsius)
                    : "?",
                held_for(for_seconds));
        }
        condition(key_of(r, std::to_string(g.index)), holds, tick.time, for_seconds,
                  instant_ ? 1 : r.samples, a, out);
    }
}

void AlertEngine::rate(const Rule& r, const NodeSample& tick, const std::vector<GpuIdentity>& ids,
                       std::vector<Alert>& out) {
    for (const auto& g : tick.gpus) {
        const auto v = field_value(g, r.field);
        if (!v) continue;
        const std::string key = key_of(r, std::to_string(g.index));
        auto& pts = series_[key].points;
        if (!pts.empty() && *v < pts.back().second) pts.clear();  // the counter was reset
        const size_t n = pts.size();
        if (n >= 2 && pts[n - 1].second == *v && pts[n - 2].second == *v)
            pts.back().first = tick.time;  // the run goes on: move its end
        else
            pts.emplace_back(tick.time, *v);
        while (pts.size() > 1 && pts[1].first <= tick.time - r.window_seconds) pts.pop_front();
        Alert a = draft(r, static_cast<int>(g.index), ids);
        if (r.limit_per_link) {
            link_rate(r, tick, g, pts, where(a.gpu, ids), a, out);
            continue;
        }
        const bool since_load = instant_ && r.limit == 0;
        const double increase = since_load ? *v : *v - pts.front().second;
        a.value = increase;
        a.summary = fmt::format(
            "{}: {:g} {} {}, above {:g}", where(a.gpu, ids), increase, field_info(r.field).what,
            since_load ? "since the driver loaded" : "in the last " + span(r.window_seconds),
            r.limit);
        condition(key, increase > r.limit, tick.time, 0, 1, a, out);
    }
}

// A rate against the GPU's own link (PCIe replays: policy/gpu_health.h). One look judges the
// count since the driver loaded over the uptime, as doctor's gpu.pcie-replay does: the driver
// loaded at or after boot, so that rate is never above the true one.
void AlertEngine::link_rate(const Rule& r, const NodeSample& tick, const GpuSample& g,
                            const std::deque<std::pair<double, double>>& pts,
                            const std::string& who, Alert& a, std::vector<Alert>& out) {
    const double per_minute =
        policy::pcie_replay_limit_per_minute(g.pcie_gen_max, g.pcie_width_max);
    const std::string link = policy::pcie_link_name(g.pcie_gen_max, g.pcie_width_max);
    const double count = pts.back().second;
    const std::string key = key_of(r, std::to_string(g.index));
    if (instant_) {
        if (!tick.uptime_seconds || *tick.uptime_seconds < 60) return;  // no window to judge
        const double minutes = *tick.uptime_seconds / 60;
        a.value = count / minutes;
        a.summary = fmt::format(
            "{}: {:g} {} since the driver loaded, {:.1f} per minute over {} of uptime, above the "
            "{:.2f} per minute a healthy {} link allows",
            who, count, field_info(r.field).what, *a.value, span(*tick.uptime_seconds), per_minute,
            link);
        condition(key, *a.value > per_minute, tick.time, 0, 1, a, out);
        return;
    }
    const double limit = per_minute * r.window_seconds / 60;
    const double increase = count - pts.front().second;
    a.value = increase;
    a.summary =
        fmt::format("{}: {:g} {} in the last {}, above the {:.1f} a healthy {} link allows", who,
                    increase, field_info(r.field).what, span(r.window_seconds), limit, link);
    condition(key, increase > limit, tick.time, 0, 1, a, out);
}

void AlertEngine::gpu_state(const Rule& r, const NodeSample& tick,
                            const std::vector<GpuIdentity>& ids, std::vector<Alert>& out) {
    const GpuState want = r.event == EventKind::kGpuLost ? GpuState::kLost : GpuState::kHung;
    for (const auto& g : tick.gpus) {
        Alert a = draft(r, static_cast<int>(g.index), ids);
        a.summary = fmt::format("{} is {}: {}", where(a.gpu, ids), gpu_state_name(want), g.problem);
        condition(key_of(r, std::to_string(g.index)), g.state == want, tick.time, 0, 1, a, out);
    }
}

void AlertEngine::kernel(const Rule& r, const NodeSample& tick, const std::vector<GpuIdentity>& ids,
                         const std::vector<KernelEvent>& events, std::vector<Alert>& out) {
    const double now = tick.time;
    for (const auto& e : events) {
        if (!event_matches(r, e)) continue;
        const auto [xid, device] = as_xid(r, e);
        Track& t = tracks_[key_of(r, device + "/" + std::to_string(xid))];
        t.last_event = now;
        if (t.firing) {
            ++t.alert.count;  // a repeat, or the other line of the same event: counted once
            continue;
        }
        Alert a = draft(r, gpu_for_device(ids, device), ids);
        a.device = device;
        a.since = a.at = now;
        if (xid) {
            a.xid = xid;
            const XidInfo* info = find_xid(xid);
            a.summary = fmt::format("Xid {} on {} ({}): {}", xid, where(a.gpu, ids), device,
                                    info ? info->meaning : "not in the Xid catalog");
            if (a.remedy.empty())
                a.remedy = info ? info->action
                                : "look up the code in NVIDIA's Xid catalog; run the GPU "
                                  "diagnostics if it repeats";
        } else {
            a.summary = fmt::format("{} on {} ({}): {}", kernel_event_kind_name(e.kind),
                                    where(a.gpu, ids), e.device, e.message);
        }
        t.firing = true;
        t.since = now;
        t.alert = a;
        out.push_back(a);
    }
    const std::string prefix = r.name + "/";
    for (auto it = tracks_.lower_bound(prefix);
         it != tracks_.end() && it->first.starts_with(prefix); ++it) {
        Track& t = it->second;
        if (!t.firing || now - t.last_event < r.hold_seconds) continue;
        t.firing = false;
        Alert res = t.alert;
        res.firing = false;
        res.at = now;
        res.summary = fmt::format("resolved, no repeat for {} ({} in all): {}",
                                  span(r.hold_seconds), res.count, res.summary);
        out.push_back(res);
    }
}

void AlertEngine::skew(const Rule& r, const NodeSample& tick, const std::vector<GpuIdentity>& ids,
                       std::vector<Alert>& out) {
    std::vector<double> values;
    for (const auto& g : tick.gpus)
        if (auto v = field_value(g, r.field); v && g.state == GpuState::kOk) values.push_back(*v);
    const double median = bench::median_of(values);
    const bool busy = values.size() >= 2 && (!r.busy_above || median > *r.busy_above);
    for (const auto& g : tick.gpus) {
        const auto v = field_value(g, r.field);
        if (!v) continue;
        const double off = std::fabs(*v - median);
        Alert a = draft(r, static_cast<int>(g.index), ids);
        a.value = *v;
        a.summary = fmt::format("{}: {} {} while the node's median is {} (off by {}) for {}",
                                where(a.gpu, ids), field_info(r.field).what, shown(r.field, *v),
                                shown(r.field, median), shown(r.field, off), span(r.for_seconds));
        condition(key_of(r, std::to_string(g.index)), busy && off > r.limit, tick.time,
                  r.for_seconds, r.samples, a, out);
    }
}

void AlertEngine::stability(const Rule& r, const NodeSample& tick,
                            const std::vector<GpuIdentity>& ids, std::vector<Alert>& out) {
    for (const auto& g : tick.gpus) {
        const auto v = field_value(g, r.field);
        if (!v) continue;
        const std::string key = key_of(r, std::to_string(g.index));
        Series& series = series_[key];
        const bool busy = !r.busy_above || (g.utilization && *g.utilization > *r.busy_above);
        if (!busy)
            series.clear();  // judged over time under load only
        else
            series.push(tick.time, *v);
        while (!series.points.empty() && series.points.front().first < tick.time - r.window_seconds)
            series.pop();
        const auto& pts = series.points;
        double sd = 0;
        const bool full =
            pts.size() >= 3 && tick.time - pts.front().first >= 0.9 * r.window_seconds;
        if (full) {
            const auto n = static_cast<double>(pts.size());
            const double mean = series.sum / n;
            sd = std::sqrt(std::max(0.0, (series.sum_squares - n * mean * mean) / (n - 1)));
        }
        Alert a = draft(r, static_cast<int>(g.index), ids);
        a.value = sd;
        a.summary = fmt::format(
            "{}: {} varied with a standard deviation of {} over the last {}{}, "
            "above {}",
            where(a.gpu, ids), field_info(r.field).what, shown(r.field, sd), span(r.window_seconds),
            r.busy_above ? " under load" : "", shown(r.field, r.limit));
        condition(key, full && sd > r.limit, tick.time, 0, 1, a, out);
    }
}

std::vector<Alert> AlertEngine::evaluate(const NodeSample& tick,
                                         const std::vector<GpuIdentity>& gpus,
                                         const std::vector<KernelEvent>& events) {
    std::vector<Alert> out;
    for (const Rule& r : rules_) {
        switch (r.kind) {
            case RuleKind::kThreshold:
                threshold(r, tick, gpus, out);
                break;
            case RuleKind::kRate:
                rate(r, tick, gpus, out);
                break;
            case RuleKind::kEvent:
                if (r.event == EventKind::kGpuLost || r.event == EventKind::kGpuHung)
                    gpu_state(r, tick, gpus, out);
                else
                    kernel(r, tick, gpus, events, out);
                break;
            case RuleKind::kSkew:
                skew(r, tick, gpus, out);
                break;
            case RuleKind::kStability:
                stability(r, tick, gpus, out);
                break;
        }
    }
    return out;
}

std::vector<Alert> AlertEngine::firing() const {
    std::vector<Alert> out;
    for (const auto& [key, t] : tracks_)
        if (t.firing) out.push_back(t.alert);
    return out;
}

std::vector<Alert> AlertEngine::replace_rules(std::vector<Rule> rules, double now) {
    std::vector<Alert> out;
    for (const Rule& old : rules_) {
        const bool kept = std::find(rules.begin(), rules.end(), old) != rules.end();
        if (kept) continue;
        const std::string prefix = old.name + "/";
        for (auto it = tracks_.lower_bound(prefix);
             it != tracks_.end() && it->first.starts_with(prefix);) {
            if (it->second.firing) {
                Alert a = it->second.alert;
                a.firing = false;
                a.at = now;
                a.summary = "resolved because its rule changed: " + a.summary;
                out.push_back(a);
            }
            it = tracks_.erase(it);
        }
        for (auto it = series_.lower_bound(prefix);
             it != series_.end() && it->first.starts_with(prefix);)
            it = series_.erase(it);
    }
    rules_ = std::move(rules);
    return out;
}

std::string alert_json(const Alert& a) {
    nlohmann::json j = {{"rule", a.rule},
                        {"severity", severity_name(a.severity)},
                        {"state", a.firing ? "firing" : "resolved"},
                        {"since", a.since},
                        {"at", a.at},
                        {"count", a.count},
                        {"summary", a.summary},
                        {"remedy", a.remedy}};
    if (!a.check.empty()) j["check"] = a.check;
    if (a.gpu >= 0) j["gpu"] = a.gpu;
    if (!a.uuid.empty()) j["uuid"] = a.uuid;
    if (!a.device.empty()) j["pci_bus_id"] = a.device;
    if (a.xid) j["xid"] = a.xid;
    if (a.value) j["value"] = *a.value;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trainrig::watch

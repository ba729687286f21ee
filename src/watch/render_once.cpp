#include "watch/render_once.h"

#include <fmt/format.h>

#include "doctor/xid_catalog.h"
#include "watch/metrics_render.h"
#include "watch/sample_json.h"

namespace trainrig::watch {
namespace {

std::string reasons_text(uint64_t bits) {
    std::string out;
    for (const auto& r : kClockEventReasons)
        if (bits & r.bit) out += (out.empty() ? "" : ",") + std::string(r.name);
    return out.empty() ? "none" : out;
}

nlohmann::json event_json(const WatchView& v, const KernelEvent& e) {
    nlohmann::json j = {{"kind", kernel_event_kind_name(e.kind)},
                        {"seq", e.seq},
                        {"seconds_since_boot", static_cast<double>(e.usec) / 1e6},
                        {"pci_bus_id", e.device},
                        {"message", e.message}};
    if (const int g = gpu_for_device(v.gpus, e.device); g >= 0) j["gpu"] = g;
    if (e.kind == KernelEvent::Kind::kXid) {
        j["xid"] = e.xid;
        if (const XidInfo* info = find_xid(e.xid)) {
            j["meaning"] = info->meaning;
            j["severity"] = info->severity == XidSeverity::kFatal ? "fatal" : "warn";
            j["action"] = info->action;
        }
    }
    return j;
}

}  // namespace

nlohmann::json view_to_json(const WatchView& v, const std::vector<KernelEvent>& events) {
    nlohmann::json doc = {{"schema", "trainrig.watch.sample"}, {"schema_version", 1}};
    doc["time"] = v.last ? v.last->time : v.start_time;
    doc["seconds"] = v.last ? v.last->seconds : 0.0;
    if (v.last && v.last->uptime_seconds) doc["uptime_seconds"] = *v.last->uptime_seconds;
    doc["driver_version"] = v.driver_version;
    if (!v.nvml_problem.empty()) doc["nvml_problem"] = v.nvml_problem;
    doc["gpus"] = nlohmann::json::array();
    for (const auto& id : v.gpus) {
        nlohmann::json g = {
            {"index", id.index}, {"uuid", id.uuid}, {"name", id.name}, {"pci_bus_id", id.bus_id}};
        if (v.last && id.index < v.last->gpus.size()) put_gpu_sample(v.last->gpus[id.index], g);
        doc["gpus"].push_back(std::move(g));
    }
    nlohmann::json kmsg = {{"followed", v.kmsg_followed},
                           {"records", v.kmsg_records},
                           {"lost", v.kmsg_lost},
                           {"malformed", v.kmsg_malformed}};
    if (!v.kmsg_problem.empty()) kmsg["problem"] = v.kmsg_problem;
    doc["kernel_log"] = std::move(kmsg);
    doc["kernel_events"] = nlohmann::json::array();
    for (const auto& e : events) doc["kernel_events"].push_back(event_json(v, e));
    doc["alerts"] = nlohmann::json::array();
    for (const auto& a : v.alerts) doc["alerts"].push_back(nlohmann::json::parse(alert_json(a)));
    return doc;
}

std::string render_once_table(const WatchView& v, const std::vector<KernelEvent>& events) {
    std::string out;
    if (!v.nvml_problem.empty()) out += fmt::format("GPUs: not read: {}\n", v.nvml_problem);
    if (!v.gpus.empty())
        out +=
            fmt::format("{:<4} {:<26} {:<6} {:>5} {:>17} {:>6} {:>15} {:>9}  {}\n", "GPU", "name",
                        "state", "util", "memory", "temp", "power", "SM clock", "clock events");
    const auto opt = [](const auto& value, auto&& show) -> std::string {
        return value ? show(*value) : std::string("-");
    };
    for (const auto& id : v.gpus) {
        if (!v.last || id.index >= v.last->gpus.size()) continue;
        const GpuSample& s = v.last->gpus[id.index];
        const std::string mem =
            s.memory_used_bytes && s.memory_total_bytes
                ? fmt::format("{:.1f}/{:.1f} GiB",
                              static_cast<double>(*s.memory_used_bytes) / 1073741824.0,
                              static_cast<double>(*s.memory_total_bytes) / 1073741824.0)
                : "-";
        const std::string power =
            s.power_watts
                ? fmt::format("{:.0f}", *s.power_watts) +
                      (s.power_limit_watts ? fmt::format("/{:.0f} W", *s.power_limit_watts) : " W")
                : "-";
        out += fmt::format(
            "{:<4} {:<26} {:<6} {:>5} {:>17} {:>6} {:>15} {:>9}  {}\n", id.index,
            id.name.substr(0, 26), gpu_state_name(s.state),
            opt(s.utilization, [](double u) { return fmt::format("{:.0f}%", u * 100); }), mem,
            opt(s.temperature_celsius, [](double t) { return fmt::format("{:.0f} C", t); }), power,
            opt(s.sm_clock_hertz, [](double h) { return fmt::format("{:.0f} MHz", h / 1e6); }),
            opt(s.clock_event_reasons, reasons_text));
        if (!s.problem.empty()) out += fmt::format("     {}\n", s.problem);
    }
    if (!v.kmsg_followed)
        out += fmt::format("kernel log: not read: {}\n", v.kmsg_problem);
    else
        out += fmt::format("kernel log: {} records, {} GPU or PCIe events{}\n", v.kmsg_records,
                           events.size(),
                           v.kmsg_lost ? fmt::format(", {} records lost", v.kmsg_lost) : "");
    for (const auto& e : events) {
        const int g = gpu_for_device(v.gpus, e.device);
        const std::string where = g >= 0 ? fmt::format("GPU {} ({})", g, e.device) : e.device;
        if (e.kind == KernelEvent::Kind::kXid) {
            const XidInfo* info = find_xid(e.xid);
            out += fmt::format("  [{:.1f} s] Xid {} on {}: {}\n", static_cast<double>(e.usec) / 1e6,
                               e.xid, where, info ? info->meaning : "not in the Xid catalog");
        } else {
            out += fmt::format("  [{:.1f} s] {} on {}\n", static_cast<double>(e.usec) / 1e6,
                               kernel_event_kind_name(e.kind), where);
        }
    }
    for (const auto& a : v.alerts)
        out += fmt::format("ALERT {} [{}]: {}\n  do: {}\n", a.rule, severity_name(a.severity),
                           a.summary, a.remedy);
    return out;
}

}  // namespace trainrig::watch

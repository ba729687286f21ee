#include "watch/metrics_render.h"

#include <fmt/format.h>

#include <functional>
#include <initializer_list>
#include <optional>

#include "nvml/nvml_api.h"
#include "watch/prometheus_text.h"

namespace trainrig::watch {

const ClockEventReason kClockEventReasons[9] = {
    {nvml::kClocksEventGpuIdle, "gpu_idle"},
    {nvml::kClocksEventApplicationsClocksSetting, "applications_clocks_setting"},
    {nvml::kClocksEventSwPowerCap, "sw_power_cap"},
    {nvml::kClocksEventHwSlowdown, "hw_slowdown"},
    {nvml::kClocksEventSyncBoost, "sync_boost"},
    {nvml::kClocksEventSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvml::kClocksEventHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvml::kClocksEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {nvml::kClocksEventDisplayClockSetting, "display_clock_setting"},
};

namespace {

class Renderer {
public:
    explicit Renderer(const WatchView& v) : v_(v) {}

    Labels gpu_labels(unsigned index) const {
        const std::string uuid = index < v_.gpus.size() ? v_.gpus[index].uuid : "";
        return {{"gpu", std::to_string(index)}, {"uuid", uuid}};
    }

    // One sample per GPU that has the value.
    template <class T>
    void per_gpu(const char* name, const char* type, const char* help,
                 std::optional<T> GpuSample::*field, double scale = 1) {
        t_.family(name, type, help);
        if (!v_.last) return;
        for (const auto& g : v_.last->gpus)
            if (const auto& value = g.*field)
                t_.sample(gpu_labels(g.index), static_cast<double>(*value) * scale);
    }

    // One sample per GPU and part, labelled `label`="part", for the parts the GPU reports.
    template <class T>
    void per_gpu_split(
        const char* label,
        std::initializer_list<std::pair<const char*, std::optional<T> GpuSample::*>> parts) {
        if (!v_.last) return;
        for (const auto& g : v_.last->gpus)
            for (const auto& [part, field] : parts)
                if (const auto& value = g.*field) {
                    Labels l = gpu_labels(g.index);
                    l.emplace_back(label, part);
                    t_.sample(l, static_cast<double>(*value));
                }
    }

    // A family of one unlabelled sample.
    void single(const char* name, const char* type, const char* help, double value) {
        t_.family(name, type, help);
        t_.sample({}, value);
    }

    void gpus();
    void events();
    void alerts();
    void self(double now);
    std::string str() { return t_.str(); }

private:
    const WatchView& v_;
    PrometheusText t_;
};

void Renderer::gpus() {
    t_.family("trainrig_gpu_info", "gauge",
              "A GPU watch reads, always 1; its labels name it (model, PCI bus id, driver).");
    for (const auto& g : v_.gpus) {
        Labels l = gpu_labels(g.index);
        l.emplace_back("name", g.name);
        l.emplace_back("pci_bus_id", g.bus_id);
        l.emplace_back("driver_version", v_.driver_version);
        t_.sample(l, 1);
    }
    t_.family("trainrig_gpu_up", "gauge",
              "1 when every NVML call for the GPU answered at the last tick, 0 when it is lost, "
              "hung or failing.");
    if (v_.last)
        for (const auto& g : v_.last->gpus)
            t_.sample(gpu_labels(g.index), g.state == GpuState::kOk ? 1 : 0);
    t_.family("trainrig_gpu_state", "gauge",
              "The GPU's state at the last tick: 1 for the state it is in (ok, lost, hung, "
              "error), 0 for the others.");
    if (v_.last)
        for (const auto& g : v_.last->gpus)
            for (GpuState s : {GpuState::kOk, GpuState::kLost, GpuState::kHung, GpuState::kError}) {
                Labels l = gpu_labels(g.index);
                l.emplace_back("state", gpu_state_name(s));
                t_.sample(l, g.state == s ? 1 : 0);
            }

    per_gpu("trainrig_gpu_utilization_ratio", "gauge",
            "Fraction of the last sample period in which a kernel ran (NVML utilization.gpu).",
            &GpuSample::utilization);
    per_gpu("trainrig_gpu_memory_utilization_ratio", "gauge",
            "Fraction of the last sample period in which device memory was read or written.",
            &GpuSample::memory_utilization);
    per_gpu("trainrig_gpu_memory_used_bytes", "gauge", "Device memory in use.",
            &GpuSample::memory_used_bytes);
    per_gpu("trainrig_gpu_memory_total_bytes", "gauge", "Device memory in all.",
            &GpuSample::memory_total_bytes);
    per_gpu("trainrig_gpu_temperature_celsius", "gauge", "GPU core temperature.",
            &GpuSample::temperature_celsius);
    per_gpu("trainrig_gpu_power_watts", "gauge", "Power draw of the board.",
            &GpuSample::power_watts);
    per_gpu("trainrig_gpu_power_limit_watts", "gauge", "Power limit the driver enforces.",
            &GpuSample::power_limit_watts);
    per_gpu("trainrig_gpu_energy_joules_total", "counter",
            "Energy used since the driver loaded (NVML total energy consumption).",
            &GpuSample::energy_joules);
    per_gpu("trainrig_gpu_sm_clock_hertz", "gauge", "SM clock.", &GpuSample::sm_clock_hertz);
    per_gpu("trainrig_gpu_memory_clock_hertz", "gauge", "Memory clock.",
            &GpuSample::memory_clock_hertz);
    t_.family("trainrig_gpu_clock_event_active", "gauge",
              "1 while the reason holds clocks down (nvmlClocksEventReasons), per reason.");
    if (v_.last)
        for (const auto& g : v_.last->gpus) {
            if (!g.clock_event_reasons) continue;
            for (const auto& r : kClockEventReasons) {
                Labels l = gpu_labels(g.index);
                l.emplace_back("reason", r.name);
                t_.sample(l, (*g.clock_event_reasons & r.bit) ? 1 : 0);
            }
        }
    per_gpu("trainrig_gpu_pcie_replays_total", "counter",
            "PCIe replays since the driver loaded: link-level retransmissions.",
            &GpuSample::pcie_replays);
    t_.family("trainrig_gpu_ecc_errors_total", "counter",
              "ECC errors in device memory since the driver loaded, by type.");
    per_gpu_split<uint64_t>("type", {{"corrected", &GpuSample::ecc_corrected},
                                     {"uncorrected", &GpuSample::ecc_uncorrected}});
    t_.family("trainrig_gpu_remapped_rows", "gauge",
              "Memory rows remapped to spares, by the kind of error that caused it.");
    per_gpu_split<uint64_t>("cause", {{"correctable", &GpuSample::remapped_rows_correctable},
                                      {"uncorrectable", &GpuSample::remapped_rows_uncorrectable}});
    per_gpu("trainrig_gpu_row_remap_pending", "gauge",
            "1 when a row remap waits for a GPU reset (Xid 63).", &GpuSample::remap_pending);
    per_gpu("trainrig_gpu_row_remap_failed", "gauge",
            "1 when a row remap found no spare row (Xid 64): the GPU needs service.",
            &GpuSample::remap_failed);
    t_.family("trainrig_gpu_nvlinks", "gauge", "NVLink links of the GPU, by state (up, down).");
    per_gpu_split<unsigned>("state",
                            {{"up", &GpuSample::nvlinks_up}, {"down", &GpuSample::nvlinks_down}});
}

void Renderer::events() {
    t_.family("trainrig_gpu_xid_events_total", "counter",
              "NVIDIA Xid reports in the kernel log since watching began, per GPU and Xid code.");
    for (const auto& [key, n] : v_.events.xid) {
        const int gpu = gpu_for_device(v_.gpus, key.first);
        Labels l =
            gpu >= 0 ? gpu_labels(static_cast<unsigned>(gpu)) : Labels{{"gpu", ""}, {"uuid", ""}};
        l.emplace_back("pci_bus_id", key.first);
        l.emplace_back("xid", std::to_string(key.second));
        t_.sample(l, static_cast<double>(n));
    }
    t_.family("trainrig_gpu_fallen_off_bus_total", "counter",
              "\"GPU has fallen off the bus\" reports in the kernel log, per PCI device.");
    for (const auto& [device, n] : v_.events.fallen_off_bus)
        t_.sample({{"pci_bus_id", device}}, static_cast<double>(n));
    t_.family("trainrig_pcie_aer_errors_total", "counter",
              "PCIe AER errors in the kernel log, per reporting device and severity.");
    for (const auto& [key, n] : v_.events.aer)
        t_.sample({{"device", key.first}, {"severity", key.second}}, static_cast<double>(n));
}

void Renderer::alerts() {
    t_.family("trainrig_alerts_firing", "gauge",
              "Alerts firing now, 1 each; labels name the rule and where (gpu, pci_bus_id, xid "
              "are empty when they do not apply).");
    for (const auto& a : v_.alerts)
        t_.sample({{"rule", a.rule},
                   {"severity", severity_name(a.severity)},
                   {"gpu", a.gpu >= 0 ? std::to_string(a.gpu) : ""},
                   {"pci_bus_id", a.device},
                   {"xid", a.xid ? std::to_string(a.xid) : ""}},
                  1);
}

void Renderer::self(double now) {
    single("trainrig_watch_up", "gauge",
           "1 when the last tick is recent (within three intervals) and NVML answers or "
           "there is no NVIDIA driver; 0 when ticks stall or NVML fails.",
           watch_healthy(v_, now) ? 1 : 0);
    single("trainrig_watch_nvml_available", "gauge",
           "1 when NVML was loaded and initialised, so GPUs are read.",
           v_.nvml_problem.empty() ? 1 : 0);
    single("trainrig_watch_start_time_seconds", "gauge", "When watching began (Unix time).",
           v_.start_time);
    single("trainrig_watch_ticks_total", "counter", "Ticks since watching began.",
           static_cast<double>(v_.ticks));
    single("trainrig_watch_slow_ticks_total", "counter",
           "Ticks that took longer than the interval.", static_cast<double>(v_.slow_ticks));
    t_.family("trainrig_watch_last_tick_timestamp_seconds", "gauge",
              "When the last tick began (Unix time).");
    if (v_.last) t_.sample({}, v_.last->time);
    t_.family("trainrig_watch_tick_duration_seconds", "gauge",
              "How long the last tick took to read every GPU.");
    if (v_.last) t_.sample({}, v_.last->seconds);
    t_.family("trainrig_watch_xid_source", "gauge",
              "Where Xid reports come from: 1 for the source in use (kernel_log, nvml_events "
              "when the kernel log cannot be read, none).");
    for (const char* src : {"kernel_log", "nvml_events", "none"})
        t_.sample({{"source", src}}, v_.xid_source == src ? 1 : 0);
    single("trainrig_watch_kmsg_followed", "gauge",
           "1 when the kernel log is followed for Xid and AER events.", v_.kmsg_followed ? 1 : 0);
    single("trainrig_watch_kmsg_records_total", "counter", "Kernel log records read.",
           static_cast<double>(v_.kmsg_records));
    single("trainrig_watch_kmsg_records_lost_total", "counter",
           "Kernel log records overwritten in the ring before they could be read.",
           static_cast<double>(v_.kmsg_lost));
    single("trainrig_watch_kmsg_malformed_total", "counter",
           "Kernel log records that did not parse.", static_cast<double>(v_.kmsg_malformed));
}

}  // namespace

std::string render_metrics(const WatchView& view, double now) {
    Renderer r(view);
    r.gpus();
    r.events();
    r.alerts();
    r.self(now);
    return r.str();
}

std::string render_loop_counters(const LoopCounters& c) {
    PrometheusText t;
    t.family("trainrig_alert_notifications_total", "counter",
             "Alert deliveries to the rules file's actions, by result (delivered, failed, "
             "dropped when the queue was full).");
    t.sample({{"result", "delivered"}}, static_cast<double>(c.delivered));
    t.sample({{"result", "failed"}}, static_cast<double>(c.failed));
    t.sample({{"result", "dropped"}}, static_cast<double>(c.dropped));
    t.family("trainrig_watch_history_writes_total", "counter",
             "Ticks written to the --db history, by result (ok, failed: disk full, I/O error).");
    if (c.history) {
        t.sample({{"result", "ok"}}, static_cast<double>(c.history_ok));
        t.sample({{"result", "failed"}}, static_cast<double>(c.history_failed));
    }
    return t.str();
}

std::string render_scrape_duration(double seconds) {
    PrometheusText t;
    t.family("trainrig_scrape_duration_seconds", "gauge", "How long building this response took.");
    t.sample({}, seconds);
    return t.str();
}

}  // namespace trainrig::watch

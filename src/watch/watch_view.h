// Everything one look at the node shows: the GPUs, the latest tick, the kernel events counted
// since watching began, and how the watcher itself is doing. The loop publishes a new view after
// each tick; /metrics, --textfile and --once render whichever view is current.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "watch/alert_engine.h"
#include "watch/gpu_sample.h"
#include "watch/kernel_events.h"

namespace trainrig::watch {

// Kernel-log events counted since watching began, keyed by the PCI address the message gave.
struct EventCounts {
    std::map<std::pair<std::string, int>, uint64_t> xid;          // (device, xid)
    std::map<std::string, uint64_t> fallen_off_bus;               // device
    std::map<std::pair<std::string, std::string>, uint64_t> aer;  // (device, severity)
    void add(const KernelEvent& e);
};

struct WatchView {
    std::vector<GpuIdentity> gpus;
    std::string driver_version;
    std::string nvml_problem;  // why there is no GPU telemetry ("" when NVML answers)
    bool nvml_absent = false;  // ... because there is no NVIDIA driver at all (not a fault)
    std::optional<NodeSample> last;
    double start_time = 0;  // seconds since the epoch
    double interval = 1;
    uint64_t ticks = 0;
    uint64_t slow_ticks = 0;  // ticks that took longer than the interval
    EventCounts events;
    bool kmsg_followed = false;
    // Where Xid reports come from: "kernel_log", "nvml_events" (the kernel log cannot be read),
    // or "none".
    std::string xid_source = "none";
    std::string kmsg_problem;  // why the kernel log is not followed, or its last read error
    uint64_t kmsg_records = 0, kmsg_lost = 0, kmsg_malformed = 0;
    std::vector<Alert> alerts;  // firing now
};

// The watcher is healthy: its last tick is recent and NVML answers (or there is no driver).
bool watch_healthy(const WatchView& view, double now);

// The GPU whose bus id the kernel's address names ("0000:41:00" or "0000:41:00.0", any case);
// -1 when none does.
int gpu_for_device(const std::vector<GpuIdentity>& gpus, const std::string& device);

}  // namespace trainrig::watch

#include "watch/watch_view.h"

#include "core/text.h"

namespace trainrig::watch {

void EventCounts::add(const KernelEvent& e) {
    switch (e.kind) {
        case KernelEvent::Kind::kXid:
            ++xid[{e.device, e.xid}];
            break;
        case KernelEvent::Kind::kFallenOffBus:
            ++fallen_off_bus[e.device];
            break;
        case KernelEvent::Kind::kAerCorrected:
            ++aer[{e.device, "corrected"}];
            break;
        case KernelEvent::Kind::kAerNonFatal:
            ++aer[{e.device, "nonfatal"}];
            break;
        case KernelEvent::Kind::kAerFatal:
            ++aer[{e.device, "fatal"}];
            break;
    }
}

bool watch_healthy(const WatchView& v, double now) {
    const bool fresh = v.last && now - v.last->time < 3 * v.interval + 1;
    return fresh && (v.nvml_problem.empty() || v.nvml_absent);
}

int gpu_for_device(const std::vector<GpuIdentity>& gpus, const std::string& device) {
    // The driver prints "0000:41:00" (domain:bus:device, no function); sysfs "0000:41:00.0".
    const std::string want = to_lower(device);
    if (want.size() < 7) return -1;
    for (const auto& g : gpus) {
        const std::string have = to_lower(g.bus_id);
        if (have == want ||
            (have.starts_with(want) && have.size() > want.size() && have[want.size()] == '.'))
            return static_cast<int>(g.index);
    }
    return -1;
}

}  // namespace trainrig::watch

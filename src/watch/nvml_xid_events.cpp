#include "watch/nvml_xid_events.h"

#include <fmt/format.h>

#include <chrono>

namespace trainrig::watch {

using namespace nvml;

std::unique_ptr<NvmlXidEvents> NvmlXidEvents::start(std::shared_ptr<const Library> lib,
                                                    const std::vector<Device>& handles,
                                                    const std::vector<GpuIdentity>& gpus,
                                                    std::string& why) {
    const Functions& f = lib->fn();
    if (!f.event_set_create || !f.device_register_events || !f.event_set_wait) {
        why = "this driver's NVML has no event sets";
        return nullptr;
    }
    EventSet set = nullptr;
    if (Return r = f.event_set_create(&set); r != kSuccess) {
        why = lib->describe("nvmlEventSetCreate", r);
        return nullptr;
    }
    std::vector<std::pair<Device, GpuIdentity>> watched;
    for (size_t i = 0; i < handles.size() && i < gpus.size(); ++i)
        if (handles[i] &&
            f.device_register_events(handles[i], kEventTypeXidCriticalError, set) == kSuccess)
            watched.emplace_back(handles[i], gpus[i]);
    if (watched.empty()) {
        if (f.event_set_free) f.event_set_free(set);
        why = "no GPU takes Xid event registration";
        return nullptr;
    }
    std::unique_ptr<NvmlXidEvents> e(new NvmlXidEvents());
    e->shared_ = std::make_shared<Shared>();
    e->thread_ = std::thread([lib, set, watched, shared = e->shared_] {
        const Functions& fn = lib->fn();
        while (!shared->stop.load()) {
            EventData data{};
            const Return r = fn.event_set_wait(set, &data, 500);
            if (r == kErrorTimeout) continue;
            if (r != kSuccess) {  // a lost GPU, a driver error: try again, without spinning
                std::this_thread::sleep_for(std::chrono::seconds(1));
                continue;
            }
            if (data.eventType != kEventTypeXidCriticalError) continue;
            KernelEvent k;
            k.kind = KernelEvent::Kind::kXid;
            k.xid = static_cast<int>(data.eventData);
            for (const auto& [device, id] : watched)
                if (device == data.device) {
                    k.device = id.bus_id;
                    k.message =
                        fmt::format("NVML: Xid {} on GPU {} ({})", k.xid, id.index, id.bus_id);
                }
            std::lock_guard lock(shared->mutex);
            shared->queue.push_back(std::move(k));
        }
        if (fn.event_set_free) fn.event_set_free(set);
        std::lock_guard lock(shared->mutex);
        shared->exited = true;
        shared->exited_cv.notify_all();
    });
    return e;
}

NvmlXidEvents::~NvmlXidEvents() {
    shared_->stop = true;
    std::unique_lock lock(shared_->mutex);
    // A wait answers within its 500 ms timeout; one stuck in the driver is abandoned.
    const bool exited =
        shared_->exited_cv.wait_for(lock, std::chrono::seconds(2), [&] { return shared_->exited; });
    lock.unlock();
    if (exited)
        thread_.join();
    else
        thread_.detach();
}

std::vector<KernelEvent> NvmlXidEvents::take() {
    std::lock_guard lock(shared_->mutex);
    return std::exchange(shared_->queue, {});
}

}  // namespace trainrig::watch

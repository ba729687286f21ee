// Event sets: the fixture's "events" queue, handed out as Xid events (README.md, "Events").
#include <algorithm>
#include <chrono>
#include <thread>

#include "fake_nvml_export.h"

using namespace trainrig::nvml;
using namespace fake_nvml;

// Only under the library's lock. Sets belong to one initialisation: a call that began under an
// earlier one (a shutdown and init raced it) finds none.
static EventSetState* find_set(EventSet set, const std::shared_ptr<const Model>& model) {
    if (state().model != model) return nullptr;
    for (const auto& owned : state().event_sets)
        if (reinterpret_cast<EventSet>(owned.get()) == set) return owned.get();
    return nullptr;
}

FAKE_NVML_EXPORT Return nvmlEventSetCreate(EventSet* set) {
    const Call call = begin_system_call(__func__);
    if (call.rc != kSuccess) return call.rc;
    if (!set) return kErrorInvalidArgument;
    auto created = std::make_unique<EventSetState>();
    created->delivered.resize(call.model->events.size());
    std::lock_guard lock(state().mutex);
    if (state().model != call.model) return kErrorUninitialized;
    *set = reinterpret_cast<EventSet>(created.get());
    state().event_sets.push_back(std::move(created));
    return kSuccess;
}

FAKE_NVML_EXPORT Return nvmlDeviceRegisterEvents(Device device, unsigned long long types,
                                                 EventSet set) {
    const Call call = begin_device_call(__func__, device);
    if (call.rc != kSuccess) return call.rc;
    std::lock_guard lock(state().mutex);
    EventSetState* registered = find_set(set, call.model);
    if (!registered) return kErrorInvalidArgument;
    registered->registered.emplace_back(call.gpu->index, types);
    return kSuccess;
}

// Whether `set` asked for Xid events from GPU `gpu`.
static bool wants_xids(const EventSetState& set, unsigned gpu) {
    for (const auto& [index, types] : set.registered)
        if (index == gpu && (types & kEventTypeXidCriticalError) != 0) return true;
    return false;
}

static Return event_wait(const char* function, EventSet set, EventData* data,
                         unsigned int timeout_ms, bool v2_layout) {
    const auto model = current_model();
    if (!model) return kErrorUninitialized;
    std::vector<const Gpu*> gpus;
    {
        std::lock_guard lock(state().mutex);
        const EventSetState* waiting = find_set(set, model);
        if (!waiting) return kErrorInvalidArgument;
        for (const auto& [index, types] : waiting->registered) gpus.push_back(&model->gpus[index]);
    }
    if (Return rc = apply_faults(*model, function, gpus, false); rc != kSuccess) return rc;
    if (!data) return kErrorInvalidArgument;
    {
        std::lock_guard lock(state().mutex);
        EventSetState* waiting = find_set(set, model);
        if (!waiting) return kErrorInvalidArgument;  // freed while the call hung
        for (size_t i = 0; i < model->events.size(); ++i) {
            const XidEvent& event = model->events[i];
            if (waiting->delivered[i] || !wants_xids(*waiting, event.gpu)) continue;
            waiting->delivered[i] = true;
            data->device = handle_of(model->gpus[event.gpu]);
            data->eventType = kEventTypeXidCriticalError;
            data->eventData = event.xid;
            // The first nvmlEventData_t ended at eventData; old callers pass that smaller struct.
            if (v2_layout) {
                data->gpuInstanceId = 0xFFFFFFFFu;  // no MIG instance
                data->computeInstanceId = 0xFFFFFFFFu;
            }
            return kSuccess;
        }
    }
    // The queue never refills, so a short nap stands in for the whole timeout.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 50u)));
    return kErrorTimeout;
}

FAKE_NVML_EXPORT Return nvmlEventSetWait(EventSet set, EventData* data, unsigned int timeout_ms) {
    return event_wait(__func__, set, data, timeout_ms, false);
}

#ifndef FAKE_NVML_OLD
FAKE_NVML_EXPORT Return nvmlEventSetWait_v2(EventSet set, EventData* data,
                                            unsigned int timeout_ms) {
    return event_wait(__func__, set, data, timeout_ms, true);
}
#endif

FAKE_NVML_EXPORT Return nvmlEventSetFree(EventSet set) {
    const Call call = begin_system_call(__func__);
    if (call.rc != kSuccess) return call.rc;
    std::lock_guard lock(state().mutex);
    auto& sets = state().event_sets;
    const auto it = std::find_if(sets.begin(), sets.end(), [set](const auto& owned) {
        return reinterpret_cast<EventSet>(owned.get()) == set;
    });
    if (it == sets.end()) return kErrorInvalidArgument;
    sets.erase(it);
    return kSuccess;
}

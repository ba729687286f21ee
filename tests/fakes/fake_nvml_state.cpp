#include "fake_nvml_state.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "fake_nvml_fixture.h"
#include "fake_nvml_names.h"

namespace fake_nvml {

using namespace trainrig::nvml;

State& state() {
    static State instance;
    return instance;
}

Return init(std::string_view function) {
    const char* path = std::getenv("TRAINRIG_FAKE_NVML");
    if (!path || !*path) return kErrorDriverNotLoaded;
    std::shared_ptr<const Model> loaded;
    try {
        loaded = std::make_shared<const Model>(load_fixture(path));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fake NVML: %s: %s\n", path, e.what());
        return kErrorUnknown;
    }
    if (loaded->init != kSuccess) return loaded->init;

    std::shared_ptr<const Model> current;
    {
        std::lock_guard lock(state().mutex);
        // A nested init keeps the first one's table: handles already given out stay valid.
        if (state().init_count++ == 0) {
            state().model = loaded;
            state().event_sets.clear();
        }
        current = state().model;
    }
    return apply_faults(*current, function, {}, false);
}

Return shutdown() {
    const Call call = begin_system_call("nvmlShutdown");
    if (call.rc != kSuccess) return call.rc;
    std::lock_guard lock(state().mutex);
    if (state().init_count == 0) return kErrorUninitialized;  // raced with another shutdown
    if (--state().init_count == 0) {
        state().model.reset();
        state().event_sets.clear();
    }
    return kSuccess;
}

std::shared_ptr<const Model> current_model() {
    std::lock_guard lock(state().mutex);
    return state().model;
}

Device handle_of(const Gpu& gpu) { return reinterpret_cast<Device>(const_cast<Gpu*>(&gpu)); }

const Gpu* find_gpu(const Model& model, Device device) {
    for (const auto& gpu : model.gpus)
        if (handle_of(gpu) == device) return &gpu;
    return nullptr;
}

Return apply_faults(const Model& model, std::string_view function, std::span<const Gpu* const> gpus,
                    bool lost_applies) {
    if (const auto& hang = model.hang; hang && names_call(hang->function, function)) {
        bool on_hung_gpu = !hang->gpu;
        for (const Gpu* gpu : gpus) on_hung_gpu = on_hung_gpu || gpu->index == *hang->gpu;
        if (on_hung_gpu) std::this_thread::sleep_for(std::chrono::duration<double>(hang->seconds));
    }
    for (const Gpu* gpu : gpus) {
        // Both spellings may be listed; the exact name wins over the unversioned one.
        if (auto it = gpu->errors.find(function); it != gpu->errors.end()) return it->second;
        for (const auto& [key, code] : gpu->errors)
            if (names_call(key, function)) return code;
    }
    if (lost_applies)
        for (const Gpu* gpu : gpus)
            if (gpu->lost) return kErrorGpuIsLost;
    return kSuccess;
}

static Call refused(Return rc) {
    Call call;
    call.rc = rc;
    return call;
}

Call begin_system_call(std::string_view function) {
    Call call{kSuccess, current_model(), nullptr};
    if (!call.model) return refused(kErrorUninitialized);
    call.rc = apply_faults(*call.model, function, {}, false);
    return call;
}

Call begin_device_call(std::string_view function, Device device) {
    Call call{kSuccess, current_model(), nullptr};
    if (!call.model) return refused(kErrorUninitialized);
    call.gpu = find_gpu(*call.model, device);
    if (!call.gpu) return refused(kErrorInvalidArgument);
    call.rc = apply_faults(*call.model, function, {&call.gpu, 1}, true);
    return call;
}

Call begin_index_call(std::string_view function, unsigned index) {
    Call call{kSuccess, current_model(), nullptr};
    if (!call.model) return refused(kErrorUninitialized);
    if (index >= call.model->gpus.size()) return refused(kErrorInvalidArgument);
    call.gpu = &call.model->gpus[index];
    // A lost GPU still has a handle; only what is asked through it fails.
    call.rc = apply_faults(*call.model, function, {&call.gpu, 1}, false);
    return call;
}

}  // namespace fake_nvml

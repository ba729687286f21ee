// The fake library's run-time state and the checks every entry point makes before it answers:
// initialised, a handle from the current table, and the fixture's "hang", "errors" and "lost".
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "fake_nvml_model.h"

namespace fake_nvml {

using trainrig::nvml::Device;

struct EventSetState {
    std::vector<std::pair<unsigned, unsigned long long>> registered;  // GPU index, event types
    std::vector<bool> delivered;                                      // by Model::events index
};

struct State {
    std::mutex mutex;
    unsigned init_count = 0;
    // Calls copy this pointer, so a shutdown on another thread cannot free what they read.
    std::shared_ptr<const Model> model;
    std::vector<std::unique_ptr<EventSetState>> event_sets;
};

State& state();

// nvmlInit*: reads TRAINRIG_FAKE_NVML afresh each time (README.md, "Initialisation").
Return init(std::string_view function);
Return shutdown();

// The model of the current initialisation; nullptr before nvmlInit and after the last shutdown.
std::shared_ptr<const Model> current_model();

Device handle_of(const Gpu& gpu);
const Gpu* find_gpu(const Model& model, Device device);  // nullptr for a foreign handle

// Sleeps (without the lock) if the fixture's hang names this call, then returns the code the
// GPUs' "errors" or "lost" force on it, or kSuccess when the call should answer normally.
Return apply_faults(const Model& model, std::string_view function, std::span<const Gpu* const> gpus,
                    bool lost_applies);

// What an admitted call answers from; `model` keeps `gpu` alive for the call.
struct Call {
    Return rc = trainrig::nvml::kSuccess;
    std::shared_ptr<const Model> model;
    const Gpu* gpu = nullptr;
};
Call begin_system_call(std::string_view function);
Call begin_device_call(std::string_view function, Device device);
Call begin_index_call(std::string_view function, unsigned index);  // nvmlDeviceGetHandleByIndex

}  // namespace fake_nvml

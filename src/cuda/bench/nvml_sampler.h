// Temperature, SM clock and power of the GPUs under load, read through trainrig's dlopen NVML
// layer in a side thread while a benchmark runs. Without NVML it says why and reads nothing:
// a burn still runs and reports its arithmetic.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/bench/gpu_inventory.h"
#include "nvml/nvml_library.h"

namespace trainrig::cuda {

struct GpuSeries {
    std::vector<double> temperature_c;
    std::vector<double> sm_clock_mhz;
    std::vector<double> power_w;
    bool matched = false;  // NVML has a device at this GPU's PCI address
};

class NvmlSampler {
public:
    // Starts sampling every `period`, one series per GPU in `gpus` order.
    NvmlSampler(const std::vector<GpuInfo>& gpus, std::chrono::milliseconds period);
    ~NvmlSampler();
    NvmlSampler(const NvmlSampler&) = delete;
    NvmlSampler& operator=(const NvmlSampler&) = delete;

    // Ends the thread; the series are complete afterwards.
    void stop();
    bool available() const { return lib_.has_value() && why_.empty(); }
    const std::string& why() const { return why_; }
    const GpuSeries& series(size_t i) const { return series_[i]; }

private:
    void sample_once();

    std::optional<nvml::Library> lib_;
    std::vector<nvml::Device> devices_;  // nullptr where NVML has no match
    std::vector<GpuSeries> series_;
    std::string why_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::chrono::milliseconds period_;
};

}  // namespace trainrig::cuda

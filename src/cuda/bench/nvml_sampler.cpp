// NVML readings during a benchmark: init, match CUDA devices by PCI address, poll, shutdown.
#include "cuda/bench/nvml_sampler.h"

#include <algorithm>
#include <cctype>

#include "nvml/nvml_reader.h"

namespace trainrig::cuda {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace

NvmlSampler::NvmlSampler(const std::vector<GpuInfo>& gpus, std::chrono::milliseconds period)
    : series_(gpus.size()), period_(period) {
    devices_.assign(gpus.size(), nullptr);
    auto lib = nvml::Library::open(nvml::choose_library().path);
    if (!lib.ok()) {
        why_ = lib.status().message();
        return;
    }
    lib_.emplace(std::move(lib).value());
    const nvml::Functions& f = lib_->fn();
    if (const nvml::Return r = f.init(); r != nvml::kSuccess) {
        why_ = lib_->describe("nvmlInit", r);
        lib_.reset();
        return;
    }
    unsigned count = 0;
    if (const nvml::Return r = f.device_get_count(&count); r != nvml::kSuccess) {
        why_ = lib_->describe("nvmlDeviceGetCount", r);
        return;
    }
    for (unsigned i = 0; i < count; ++i) {
        nvml::Device dev = nullptr;
        nvml::PciInfo pci{};
        if (f.device_get_handle_by_index(i, &dev) != nvml::kSuccess || !f.device_get_pci_info ||
            f.device_get_pci_info(dev, &pci) != nvml::kSuccess)
            continue;
        const std::string bus = lower(nvml::normalize_bus_id(pci.busId));
        for (size_t g = 0; g < gpus.size(); ++g)
            if (gpus[g].pci_bus_id == bus) {
                devices_[g] = dev;
                series_[g].matched = true;
            }
    }
    thread_ = std::thread([this] {
        while (!stop_.load()) {
            sample_once();
            // Sleep in short steps so stop() returns promptly.
            const auto until = std::chrono::steady_clock::now() + period_;
            while (!stop_.load() && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
}

void NvmlSampler::sample_once() {
    const nvml::Functions& f = lib_->fn();
    for (size_t g = 0; g < devices_.size(); ++g) {
        if (devices_[g] == nullptr) continue;
        unsigned v = 0;
        if (f.device_get_temperature &&
            f.device_get_temperature(devices_[g], nvml::kTemperatureGpu, &v) == nvml::kSuccess)
            series_[g].temperature_c.push_back(v);
        if (f.device_get_clock_info &&
            f.device_get_clock_info(devices_[g], nvml::kClockSm, &v) == nvml::kSuccess)
            series_[g].sm_clock_mhz.push_back(v);
        if (f.device_get_power_usage && f.device_get_power_usage(devices_[g], &v) == nvml::kSuccess)
            series_[g].power_w.push_back(v / 1000.0);  // NVML reports milliwatts
    }
}

void NvmlSampler::stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
}

NvmlSampler::~NvmlSampler() {
    stop();
    if (lib_) lib_->fn().shutdown();
}

}  // namespace trainrig::cuda

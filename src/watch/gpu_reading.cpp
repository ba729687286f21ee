#include "watch/gpu_reading.h"

namespace trainrig::watch {
namespace {

using namespace nvml;

class TickReader {
public:
    TickReader(const Library& lib, Device d, unsigned index, std::atomic<const char*>& step)
        : lib_(lib), d_(d), step_(step) {
        s_.index = index;
    }

    // Makes one call; true when it answered with a value. False, and the sample says why, when
    // it failed; false and nothing said when the GPU does not report this.
    template <class Fn, class... Args>
    bool call(const char* name, Fn fn, Args... args) {
        if (s_.state == GpuState::kLost || !fn) return false;
        step_ = name;
        return note(name, fn(d_, args...));
    }

    // What a call's return code says about the GPU; true for a value.
    bool note(const char* name, Return r) {
        if (r == kSuccess) return true;
        if (r == kErrorNotSupported || r == kErrorFunctionNotFound) return false;
        if (r == kErrorGpuIsLost) {
            s_.state = GpuState::kLost;
            s_.problem = lib_.describe(name, r);
        } else if (s_.state == GpuState::kOk) {
            s_.state = GpuState::kError;
            s_.problem = lib_.describe(name, r);
        }
        return false;
    }

    GpuSample read();

private:
    const Library& lib_;
    Device d_;
    std::atomic<const char*>& step_;
    GpuSample s_;
};

GpuSample TickReader::read() {
    const Functions& f = lib_.fn();
    Utilization u{};
    if (call("nvmlDeviceGetUtilizationRates", f.device_get_utilization_rates, &u)) {
        s_.utilization = u.gpu / 100.0;
        s_.memory_utilization = u.memory / 100.0;
    }
    Memory mem{};
    if (call("nvmlDeviceGetMemoryInfo", f.device_get_memory_info, &mem)) {
        s_.memory_used_bytes = mem.used;
        s_.memory_total_bytes = mem.total;
    }
    unsigned v = 0;
    if (call("nvmlDeviceGetTemperature", f.device_get_temperature, kTemperatureGpu, &v))
        s_.temperature_celsius = v;
    if (call("nvmlDeviceGetTemperatureThreshold", f.device_get_temperature_threshold,
             kTemperatureThresholdSlowdown, &v))
        s_.temperature_slowdown_celsius = v;
    if (call("nvmlDeviceGetTemperatureThreshold", f.device_get_temperature_threshold,
             kTemperatureThresholdGpuMax, &v))
        s_.temperature_max_operating_celsius = v;
    if (call("nvmlDeviceGetPowerUsage", f.device_get_power_usage, &v))
        s_.power_watts = v / 1000.0;  // milliwatts
    if (call("nvmlDeviceGetEnforcedPowerLimit", f.device_get_enforced_power_limit, &v))
        s_.power_limit_watts = v / 1000.0;
    unsigned long long ull = 0;
    if (call("nvmlDeviceGetTotalEnergyConsumption", f.device_get_total_energy_consumption, &ull))
        s_.energy_joules = static_cast<double>(ull) / 1000.0;  // millijoules
    if (call("nvmlDeviceGetClockInfo", f.device_get_clock_info, kClockSm, &v))
        s_.sm_clock_hertz = v * 1e6;
    if (call("nvmlDeviceGetClockInfo", f.device_get_clock_info, kClockMem, &v))
        s_.memory_clock_hertz = v * 1e6;
    if (call("nvmlDeviceGetCurrentClocksEventReasons", f.device_get_current_clocks_event_reasons,
             &ull))
        s_.clock_event_reasons = ull;
    if (call("nvmlDeviceGetPcieReplayCounter", f.device_get_pcie_replay_counter, &v))
        s_.pcie_replays = v;
    if (call("nvmlDeviceGetTotalEccErrors", f.device_get_total_ecc_errors, kMemoryErrorCorrected,
             kVolatileEcc, &ull))
        s_.ecc_corrected = ull;
    if (call("nvmlDeviceGetTotalEccErrors", f.device_get_total_ecc_errors, kMemoryErrorUncorrected,
             kVolatileEcc, &ull))
        s_.ecc_uncorrected = ull;
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    if (call("nvmlDeviceGetRemappedRows", f.device_get_remapped_rows, &corr, &unc, &pending,
             &failed)) {
        s_.remapped_rows_correctable = corr;
        s_.remapped_rows_uncorrectable = unc;
        s_.remap_pending = pending != 0;
        s_.remap_failed = failed != 0;
    }
    // Links are asked for one by one until NVML says there is no such link (nvml_reader.cpp).
    unsigned up = 0, down = 0;
    for (unsigned link = 0;
         link < kNvLinkMaxLinks && f.device_get_nvlink_state && s_.state != GpuState::kLost;
         ++link) {
        int state = 0;
        step_ = "nvmlDeviceGetNvLinkState";
        const Return r = f.device_get_nvlink_state(d_, link, &state);
        if (r == kErrorNotSupported || r == kErrorInvalidArgument) break;
        if (!note("nvmlDeviceGetNvLinkState", r)) break;
        (state == kFeatureEnabled ? up : down) += 1;
    }
    if (up + down > 0) {
        s_.nvlinks_up = up;
        s_.nvlinks_down = down;
    }
    step_ = "";
    return std::move(s_);
}

}  // namespace

GpuSample read_gpu_sample(const Library& lib, Device device, unsigned index,
                          std::atomic<const char*>& step) {
    return TickReader(lib, device, index, step).read();
}

}  // namespace trainrig::watch

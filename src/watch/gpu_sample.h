// What `watch` reads from each GPU at every tick, in SI units (docs/watch.md lists each field
// and the NVML call it comes from). A value NVML does not report on this GPU stays empty: it is
// left out of /metrics and the history rather than written as zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainrig::watch {

// Read once when watching starts; labels every series of the GPU.
struct GpuIdentity {
    unsigned index = 0;
    std::string uuid;            // "GPU-..."; empty when NVML would not say
    std::string name;            // "NVIDIA H100 80GB HBM3"
    std::string bus_id;          // "0000:41:00.0", as sysfs writes it
    uint32_t pci_device_id = 0;  // 0x2330 for an H100 SXM5; 0 when NVML would not say
    // What the link and the part can do: fixed while the driver runs, so read once and copied
    // into every sample (GpuSample's fields of the same names).
    std::optional<int64_t> pcie_gen_max = std::nullopt, pcie_width_max = std::nullopt;
    std::optional<int> nvlinks_expected = std::nullopt;
    bool nvlink_on_board = false;
};

enum class GpuState {
    kOk,     // every call answered (NOT_SUPPORTED counts as an answer)
    kLost,   // NVML answered GPU_IS_LOST: the GPU has fallen off the bus
    kHung,   // a call has not returned within the deadline
    kError,  // a call failed another way (the problem says which)
};
const char* gpu_state_name(GpuState s);

struct GpuSample {
    unsigned index = 0;
    GpuState state = GpuState::kOk;
    std::string problem;                // for any state but kOk: what failed, naming the NVML call
    std::optional<double> utilization;  // ratio 0-1 of time a kernel ran
    std::optional<double> memory_utilization;  // ratio 0-1 of time memory was read or written
    std::optional<uint64_t> memory_used_bytes;
    std::optional<uint64_t> memory_total_bytes;
    std::optional<double> temperature_celsius;
    std::optional<double> temperature_slowdown_celsius;       // where the driver slows it down
    std::optional<double> temperature_max_operating_celsius;  // NVML's "GPU max" threshold
    std::optional<double> power_watts;
    std::optional<double> power_limit_watts;
    std::optional<double> energy_joules;  // since the driver loaded (a counter)
    std::optional<double> sm_clock_hertz;
    std::optional<double> memory_clock_hertz;
    std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReasons bits
    std::optional<uint64_t> pcie_replays;         // since the driver loaded (a counter)
    std::optional<int64_t> pcie_gen_max;          // what the GPU and slot can train to together
    std::optional<int64_t> pcie_width_max;        // (from GpuIdentity)
    std::optional<uint64_t> ecc_corrected;        // volatile: since the driver loaded
    std::optional<uint64_t> ecc_uncorrected;
    std::optional<uint64_t> remapped_rows_correctable;
    std::optional<uint64_t> remapped_rows_uncorrectable;
    std::optional<bool> remap_pending;  // a remap waits for a GPU reset
    std::optional<bool> remap_failed;   // a remap found no spare row
    std::optional<unsigned> nvlinks_up;
    std::optional<unsigned> nvlinks_down;
    // The links this part has up when healthy, and whether they are wired on the board (SXM) or
    // through a bridge (hw/nvidia_gpus.h; 0 for a part the catalog does not know). Empty when
    // not judged: a node of one GPU, where NVLink carries no GPU-to-GPU traffic (as doctor).
    std::optional<int> nvlinks_expected;
    bool nvlink_on_board = false;
};

// One tick over every GPU.
struct NodeSample {
    double time = 0;                       // seconds since the Unix epoch, when the tick started
    double seconds = 0;                    // how long reading took
    std::optional<double> uptime_seconds;  // the machine's, for counters that run since boot
    std::vector<GpuSample> gpus;
};

}  // namespace trainrig::watch

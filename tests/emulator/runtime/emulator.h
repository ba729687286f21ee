// The emulated machine: its GPUs (from TRAINRIG_EMULATED_GPUS, TRAINRIG_EMULATED_GPU_MEMORY and
// TRAINRIG_EMULATED_GPU_MODEL; docs/testing.md), their memory, streams and errors, as the CUDA
// runtime functions in runtime/api_*.cpp see them.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/gpu_models.h"

namespace trainrig::emu {

class Stream;

struct EmulatedGpu {
    int index = 0;
    std::string bus_id;  // "0000:01:00.0"
    int domain = 0, bus = 0, device = 0;
    const GpuModel* model = nullptr;
    std::string name;  // "emulated A100 SXM4 80GB"
    size_t memory = 0;
    std::atomic<size_t> allocated{0};

    std::mutex mu;
    cudaError_t sticky = cudaSuccess;  // a faulted kernel poisons the device, as a GPU context
    std::vector<bool> peer_enabled;
    std::unique_ptr<Stream> null_stream;  // the legacy default stream
    std::set<Stream*> streams;  // created ones; the blocking ones order with the legacy stream
    std::map<const void*, int> max_dynamic_shared;  // cudaFuncSetAttribute, per kernel

    cudaError_t sticky_error() {
        std::lock_guard lock(mu);
        return sticky;
    }
    void poison(cudaError_t e) {
        std::lock_guard lock(mu);
        if (sticky == cudaSuccess) sticky = e;
    }
};

// Where a pointer lies: a device allocation (device ≥ 0) or pinned host memory (device = -1).
struct Allocation {
    uintptr_t begin = 0;
    size_t size = 0;
    int device = -1;
};

class Emulator {
public:
    static Emulator& get();

    // Empty with a sentence on stderr when the variables are wrong.
    std::vector<std::unique_ptr<EmulatedGpu>>& gpus() { return gpus_; }
    EmulatedGpu* gpu(int index) {
        return index >= 0 && index < static_cast<int>(gpus_.size()) ? gpus_[index].get() : nullptr;
    }
    // The calling host thread's current device (cudaSetDevice), 0 at first.
    EmulatedGpu* current();
    int& current_index();

    void add_allocation(const Allocation& a);
    bool remove_allocation(const void* p, Allocation* removed);
    // The allocation holding [p, p + bytes), if one does.
    bool find_allocation(const void* p, size_t bytes, Allocation* found);
    // Every device allocation's bytes, for the race check's before-and-after copies.
    std::vector<Allocation> device_allocations();

    void register_stream(Stream* s);
    // A destroyed stream stops being a handle but is kept: events recorded on it stay valid.
    void retire_stream(Stream* s);
    bool is_stream(const void* s);

private:
    Emulator();
    std::vector<std::unique_ptr<EmulatedGpu>> gpus_;
    std::mutex mu_;
    std::map<uintptr_t, Allocation> allocations_;  // by begin
    std::set<const void*> streams_;
    std::vector<Stream*> retired_;
};

// The calling host thread's last error (cudaGetLastError), set by a call that failed;
// set_last_error returns its argument, so a call can end with `return set_last_error(e)`.
cudaError_t& last_error();
cudaError_t set_last_error(cudaError_t e);

}  // namespace trainrig::emu

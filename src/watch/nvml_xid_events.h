// NVML's own Xid reports (nvmlEventSetWait), for when the kernel log cannot be read (no
// CAP_SYSLOG): a thread waits on an event set registered for Xid critical errors on every GPU
// that supports them and queues what arrives; each tick takes the queue. A wait that never
// returns costs only this thread, which is abandoned at shutdown.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nvml/nvml_library.h"
#include "watch/gpu_sample.h"
#include "watch/kernel_events.h"

namespace trainrig::watch {

class NvmlXidEvents {
public:
    // Null when no GPU takes Xid event registration (or the driver lacks event sets); `why`
    // then says so.
    static std::unique_ptr<NvmlXidEvents> start(std::shared_ptr<const nvml::Library> lib,
                                                const std::vector<nvml::Device>& handles,
                                                const std::vector<GpuIdentity>& gpus,
                                                std::string& why);
    ~NvmlXidEvents();

    // The Xids reported since the last call, as kernel events of kind kXid (no sequence number).
    std::vector<KernelEvent> take();

private:
    struct Shared {
        std::mutex mutex;
        std::condition_variable exited_cv;
        std::vector<KernelEvent> queue;
        std::atomic<bool> stop{false};
        bool exited = false;
    };
    NvmlXidEvents() = default;

    std::shared_ptr<Shared> shared_;
    std::thread thread_;
};

}  // namespace trainrig::watch

// Samples every GPU through NVML once per tick without ever waiting past a deadline: each GPU
// is read on its own worker thread, and a GPU whose call does not return in time is reported
// hung (naming the call) while the others are reported as usual. NVML is initialised once and
// kept: a tick is a handful of calls per GPU, not an init/shutdown cycle.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "nvml/nvml_library.h"
#include "watch/deadline_worker.h"
#include "watch/gpu_sample.h"
#include "watch/nvml_xid_events.h"

namespace trainrig::watch {

class GpuSampler {
public:
    // Loads and initialises NVML and learns each GPU's identity, within `deadline_seconds`.
    // kNotFound when there is no NVIDIA driver (no library, or DRIVER_NOT_LOADED).
    static Result<std::unique_ptr<GpuSampler>> open(const nvml::LibraryChoice& choice,
                                                    double deadline_seconds);
    ~GpuSampler();

    const std::vector<GpuIdentity>& gpus() const { return gpus_; }
    const std::string& driver_version() const { return driver_version_; }
    const std::string& library() const { return library_->path(); }

    // Starts NVML's Xid event thread (nvml_xid_events.h); false, with `why`, when it cannot.
    bool start_xid_events(std::string& why);
    // The Xids NVML reported since the last call (none when the thread is not running).
    std::vector<KernelEvent> take_xid_events();

    // Reads every GPU; returns within the deadline whatever the driver does. `now` is the
    // tick's wall-clock time (seconds since the epoch).
    NodeSample sample(double now);

private:
    GpuSampler(std::shared_ptr<const nvml::Library> lib, double deadline_seconds);

    std::shared_ptr<const nvml::Library> library_;
    double deadline_seconds_;
    std::string driver_version_;
    std::vector<GpuIdentity> gpus_;
    std::vector<nvml::Device> handles_;     // null where NVML gave none
    std::vector<std::string> unreachable_;  // why a GPU has no handle
    std::vector<std::unique_ptr<DeadlineWorker>> workers_;
    std::unique_ptr<NvmlXidEvents> xid_events_;  // before shutdown in the destructor
};

}  // namespace trainrig::watch

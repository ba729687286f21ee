// One trial of the micro-batch search (batch_search.h): a few real training steps (forward,
// backward, gradient norm, AdamW update) of the model at batch B, measuring the peak memory
// they hold and tokens/s. The tokens are synthetic (uniform over the vocabulary, fixed seed):
// memory and speed do not depend on what the tokens say. Every trial runs in a forked child of
// its own (core/child_process.h, run_in_child), so whatever it does ends with it, and the parent
// judges how it ended (judge_trial) the same way for both backends (docs/train.md, "Finding the
// micro-batch"):
//   CPU: under RLIMIT_DATA, so a failed allocation ends only the child and its memory is the
//        system's again before the next size.
//   device: the child opens the device itself (a CUDA context does not survive fork(), so the
//        parent never opens one), through the device plugin. A failed allocation, a kernel
//        fault that poisons the context or a hung kernel ends with the child's process, and the
//        next size starts on a clean device.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/child_process.h"
#include "core/status.h"
#include "train/backend.h"
#include "train/batch_search.h"
#include "train/device_plugin.h"
#include "train/model_config.h"
#include "train/optimizer.h"

namespace trainrig::train {

struct TrialSetup {
    ModelConfig model;
    int seq = 1024;
    int steps = 3;  // the first is warm-up and not timed (with one step, that one is timed)
    uint64_t seed = 1337;
    OptimizerConfig opt;
};

// Runs setup.steps steps on `backend` at batch B; tokens/s over the timed steps. Waits for
// work a device backend queued, so the time is the device's. `begin`, when given, is told each
// part as it starts ("step 2 of 3"): a trial's progress.
Result<double> run_trial_steps(Backend& backend, const TrialSetup& setup, int batch,
                               const std::function<void(std::string_view)>& begin = {});

// Whether a device backend's failure is the device running out of memory: the CUDA runtime's
// cudaErrorMemoryAllocation ("cudaMalloc(...): out of memory (file:line)", as CUDA_TRY words
// it), cuBLAS's CUBLAS_STATUS_ALLOC_FAILED, or the backend's own refusal before allocating
// ("this run needs N GiB of GPU memory ..., but only M GiB is free on the GPU").
bool is_device_oom(const Status& s);

// How long a device trial may go without progress (the device opened and the model built, one
// step, the model freed) before it counts as hung: past the device's own 120 s wait for queued
// work (cuda/device_memory.h), which reports a hung kernel as an error when it can.
inline constexpr std::chrono::seconds kDeviceTrialTimeout{300};

// What the parent needs to judge a trial's child.
struct TrialLimits {
    // How long the child may go without announcing progress; 0: no limit.
    std::chrono::milliseconds timeout{0};
    // CPU: the RLIMIT_DATA bytes the child runs under. Then a child the kernel's OOM killer
    // ends (SIGKILL) ran out of memory too. 0 on a device.
    uint64_t data_limit = 0;
};

// How a trial's child ended: `reported`, what it sent, when it sent a whole report; `end`, the
// rest (core/child_process.h). A timeout is kTimedOut whatever was sent ("no return from step 2
// of 3 within 300 s": its process group was killed); a report is the answer; without one, a SIGKILL
// under a data limit is out of memory and anything else an error naming how the process ended and
// where.
TrialResult judge_trial(const std::optional<TrialResult>& reported, const IsolatedEnd& end,
                        const TrialLimits& limits);

// The device trial, in a child: makes the backend for B with `make` (which opens the device in
// the child: make_lone_device_backend), runs the steps, reads its peak_memory_bytes() and
// destroys it. Out of memory (is_device_oom) is kOom; any other failure kError; no progress for
// `timeout` (0: none) kTimedOut.
using MakeBackend = std::function<Result<std::unique_ptr<Backend>>(
    const ModelConfig&, const OptimizerConfig&, int batch, int seq)>;
TrialResult run_device_trial(const TrialSetup& setup, int batch, const MakeBackend& make,
                             std::chrono::milliseconds timeout);

// The device the trials will use, described from a child (`describe` opens it there:
// describe_lone_device), so that this process never holds a CUDA context the children could not
// use. kIo when it does not answer within `timeout`.
Result<DeviceInfo> describe_device_in_child(const std::function<Result<DeviceInfo>()>& describe,
                                            std::chrono::milliseconds timeout);

// The CPU trial in a forked child whose data segment may grow by at most `limit_bytes`
// (RLIMIT_DATA over its usage at the start: the heap, and since Linux 4.7 every private
// writable mapping, so large allocations too). Measured peak: the growth of the child's peak
// resident memory (VmHWM) over its resident memory before the model was built. A failed
// allocation, or the kernel's OOM killer (SIGKILL), is kOom; no progress for `timeout` (0: none)
// kTimedOut. Call it before this process has run any OpenMP parallel region: libgomp's threads
// do not survive fork().
TrialResult run_cpu_trial(const TrialSetup& setup, int batch, uint64_t limit_bytes,
                          std::chrono::milliseconds timeout = {});

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS", "VmData"); 0 when unreadable.
// Allocates nothing, so it also works where an allocation has just failed.
uint64_t proc_status_bytes(const char* field);

}  // namespace trainrig::train

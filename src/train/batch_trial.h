// One trial of the micro-batch search (batch_search.h): a few real training steps (forward,
// backward, gradient norm, AdamW update) of the model at batch B, measuring the peak memory
// they hold and tokens/s. The tokens are synthetic (uniform over the vocabulary, fixed seed):
// memory and speed do not depend on what the tokens say.
//   CPU: in a forked child under RLIMIT_DATA, so a failed allocation ends only the child and
//        its memory is the system's again before the next size (docs/train.md, "Finding the
//        micro-batch").
//   device: in this process through the device plugin; the backend is destroyed after its
//        steps, so the device is empty again for the next size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "train/backend.h"
#include "train/batch_search.h"
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
// work a device backend queued, so the time is the device's.
Result<double> run_trial_steps(Backend& backend, const TrialSetup& setup, int batch);

// Whether a device backend's failure is the device running out of memory: the CUDA runtime's
// cudaErrorMemoryAllocation ("cudaMalloc(...): out of memory (file:line)", as CUDA_TRY words
// it), cuBLAS's CUBLAS_STATUS_ALLOC_FAILED, or the backend's own refusal before allocating
// ("this run needs N GiB of GPU memory ..., but only M GiB is free on the GPU").
bool is_device_oom(const Status& s);

// The device trial: makes the backend for B, runs the steps, reads its peak_memory_bytes()
// and destroys it. Out of memory (is_device_oom) is kOom; any other failure kError.
using MakeBackend = std::function<Result<std::unique_ptr<Backend>>(
    const ModelConfig&, const OptimizerConfig&, int batch, int seq)>;
TrialResult run_device_trial(const TrialSetup& setup, int batch, const MakeBackend& make);

// The CPU trial in a forked child whose data segment may grow by at most `limit_bytes`
// (RLIMIT_DATA over its usage at the start: the heap, and since Linux 4.7 every private
// writable mapping, so large allocations too). Measured peak: the growth of the child's peak
// resident memory (VmHWM) over its resident memory before the model was built. A failed
// allocation, or the kernel's OOM killer (SIGKILL), is kOom. Call it before this process has
// run any OpenMP parallel region: libgomp's threads do not survive fork().
TrialResult run_cpu_trial(const TrialSetup& setup, int batch, uint64_t limit_bytes);

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS", "VmData"); 0 when unreadable.
// Allocates nothing, so it also works where an allocation has just failed.
uint64_t proc_status_bytes(const char* field);

}  // namespace trainrig::train

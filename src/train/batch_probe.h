// `trainrig train --find-batch`: the largest micro-batch this model and sequence length train
// at on this backend within a memory capacity, found with real steps (batch_search.h,
// batch_trial.h) from plan's estimate (batch_estimate.h), and for every size tried the peak
// memory measured against the estimate and the tokens/s (docs/train.md, "Finding the
// micro-batch").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "train/batch_estimate.h"
#include "train/batch_search.h"
#include "train/batch_trial.h"

namespace trainrig::train {

struct ProbeOptions {
    TrialSetup trial;             // model, seq, steps per size, seed, optimizer
    std::string backend = "cpu";  // "cpu", or a device backend made by make_backend
    // Bytes the trials may use. CPU: 0 takes MemAvailable. Device: 0 takes the device's free
    // memory; a value caps it (the smaller of the two counts).
    uint64_t mem_limit = 0;
    double headroom = 0.10;  // fraction of the capacity kept free
    int max_batch = 1024;
    // How long a trial may go without progress before it is killed and its size counted as "did
    // not finish". 0: the backend's default (device kDeviceTrialTimeout, CPU no limit).
    std::chrono::milliseconds trial_timeout{0};
    // Device only: called in each trial's child (make_lone_device_backend), never here.
    MakeBackend make_backend;
    std::string device;              // device only: its name
    uint64_t device_free_bytes = 0;  // device only: free memory, as a child opening it saw it
    // Called after each size with what it did (a progress line).
    std::function<void(const SizeTried&)> on_size;
    // Test seam: replaces the real trials (null: CPU child or device trial).
    Trial trial_override;
    // Test seam: MemAvailable in bytes (0: read /proc/meminfo).
    uint64_t mem_available = 0;
};

struct ProbeReport {
    std::string backend, device;
    ModelConfig model;
    int seq = 0, steps = 0;
    uint64_t seed = 0;
    std::chrono::milliseconds trial_timeout{0};  // as applied; 0: none
    uint64_t capacity = 0;
    std::string capacity_source;  // "--mem-limit", "MemAvailable", "free device memory", ...
    double headroom = 0;
    int max_batch = 0;
    EstimateBasis basis;
    uint64_t parameters = 0;   // plan's count
    uint64_t fixed_bytes = 0;  // plan's fixed costs (device): outside the measurement
    int start = 0;             // where plan's estimate started the search
    SearchResult search;
    // Per size tried (the order of search.tried): the backend's own account of its memory
    // (CPU: cpu_training_bytes; 0 on a device, whose measurement is its own account).
    std::vector<uint64_t> backend_bytes;
    std::vector<std::string> notes;  // what the reader should know (synthetic data, limits)
    bool interrupted = false;        // Ctrl-C / SIGTERM stopped the search
};

// Checks the options before anything is opened (exit 2 territory): the model, sequence,
// headroom, bound, steps and trial timeout.
Status validate_probe(const ProbeOptions& o);

// The trial timeout the probe applies: o.trial_timeout, or the backend's default.
std::chrono::milliseconds probe_trial_timeout(const ProbeOptions& o);

// Runs the probe, each trial in a child process of its own (batch_trial.h). Fails only on bad
// input; a trial that fails or does not finish is in the report (search.answer kError), as is
// running out of memory.
Result<ProbeReport> run_batch_probe(const ProbeOptions& o);

// 0 found, 1 nothing fits, 2 a trial failed for another reason or did not finish.
int probe_exit_code(const ProbeReport& r);

}  // namespace trainrig::train

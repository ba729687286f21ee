// What `trainrig train` and `bench run train` do for --backend cuda before training: open the
// device world, hand the trainer a way to make the device backend, and take the device's dense
// bf16 peak from the hardware catalog for MFU.
#pragma once

#include <memory>

#include "core/status.h"
#include "train/communicator.h"
#include "train/device_plugin.h"
#include "train/trainer.h"

namespace trainrig::train {

struct DeviceRun {
    std::shared_ptr<DeviceWorld> world;
    // Set when the run's host collectives must use the device world (a torchrun-style launch);
    // otherwise the caller's communicator stays.
    std::unique_ptr<Communicator> comm;
};

// Sets o.make_backend, o.device, and o.peak_flops / o.peak_source when the catalog knows the
// device. `alone`: this process trains by itself whatever launched it (a benchmark's one-GPU
// baseline).
Result<DeviceRun> prepare_device_run(TrainOptions& o, Communicator& host, bool alone = false);

}  // namespace trainrig::train

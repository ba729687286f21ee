// The host side of the device training backend: finds libtrainrig_train_cuda.so
// (train_plugin_abi.h; $TRAINRIG_TRAIN_PLUGIN, else beside the binary), opens this process's
// device world, and wraps the plugin's model as a Backend and its world as a Communicator. The
// trainrig binary itself never links CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "train/backend.h"
#include "train/communicator.h"

namespace trainrig::train {

struct DeviceInfo {
    int index = 0;
    std::string name, pci_bus_id, compute_capability;
    uint64_t memory_bytes = 0, free_bytes = 0;
};

class DeviceWorld;

// This process's ranks and device, however it was launched:
//   mpirun/srun: `host` is the MPI communicator; rank 0's NCCL id travels through it;
//   torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK, NCCL_COMM_ID): every rank derives the same id,
//     and the device world is also the host communicator (make_device_communicator);
//   alone (or `alone` asked): one rank, no NCCL.
Result<std::shared_ptr<DeviceWorld>> open_device_world(Communicator& host, bool alone = false);
const DeviceInfo& device_info(const DeviceWorld& w);
// True when no MPI launched this process and the world has several ranks: the run's host
// collectives must go through the device world.
bool needs_device_communicator(const DeviceWorld& w);
std::unique_ptr<Communicator> make_device_communicator(std::shared_ptr<DeviceWorld> w);

Result<std::unique_ptr<Backend>> make_device_backend(std::shared_ptr<DeviceWorld> w,
                                                     const ModelConfig& config,
                                                     const OptimizerConfig& opt, int batch,
                                                     int seq);

}  // namespace trainrig::train

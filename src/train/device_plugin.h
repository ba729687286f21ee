// The host side of the device training backend: finds libtrainrig_train_cuda.so
// (train_plugin_abi.h; $TRAINRIG_TRAIN_PLUGIN, else beside the binary), opens this process's
// device world, and wraps the plugin's model as a Backend and its world as a Communicator. The
// trainrig binary itself never links CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
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

// {"index", "name", "pci_bus_id", "compute_capability", "memory_bytes", "free_bytes"}: as the
// plugin describes its device (train_plugin_abi.h), and as a child process tells its parent.
nlohmann::json device_info_json(const DeviceInfo& d);
DeviceInfo device_info_from_json(const nlohmann::json& j);

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

// For a process that works alone on the device (a micro-batch trial's child, batch_trial.h): a
// world of one rank, no NCCL, opened here. The backend holds its world; the description closes
// it again.
Result<std::unique_ptr<Backend>> make_lone_device_backend(const ModelConfig& config,
                                                          const OptimizerConfig& opt, int batch,
                                                          int seq);
Result<DeviceInfo> describe_lone_device();

}  // namespace trainrig::train

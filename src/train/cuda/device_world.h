// One training process's device and, with several ranks, its NCCL communicator (the world side
// of train_plugin_abi.h). Host collectives stage through a device buffer, so the same
// communicator carries the run's small agreements when no MPI launched it.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"
#include "cuda/device_memory.h"

namespace trainrig::train::cuda {

class DeviceWorld {
public:
    // nccl_id: the bytes of an ncclUniqueId when world > 1.
    static Result<std::unique_ptr<DeviceWorld>> open(int rank, int world, int local_rank,
                                                     const std::string& nccl_id);
    ~DeviceWorld();
    DeviceWorld(const DeviceWorld&) = delete;
    DeviceWorld& operator=(const DeviceWorld&) = delete;

    int rank() const { return rank_; }
    int world() const { return world_; }
    int device() const { return device_; }
    ncclComm_t comm() const { return comm_; }  // null with one rank
    // {"index", "name", "pci_bus_id", "compute_capability", "memory_bytes", "free_bytes"}
    Result<std::string> describe() const;

    // In place on host memory: sum (dtype ncclFloat or ncclDouble), or root's bytes to all.
    Status all_reduce(void* data, size_t n, ncclDataType_t dtype);
    Status broadcast(void* data, size_t bytes, int root);
    // After a failure a collective may never complete: abort instead of a destroy that waits.
    void mark_broken() { broken_ = true; }

private:
    DeviceWorld() = default;
    Status stage(size_t bytes);
    int rank_ = 0, world_ = 1, device_ = 0;
    ncclComm_t comm_ = nullptr;
    bool broken_ = false;
    trainrig::cuda::Stream stream_;
    trainrig::cuda::DeviceMemory staging_;
    size_t staging_bytes_ = 0;
};

}  // namespace trainrig::train::cuda

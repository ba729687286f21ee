// One training process's device and, with several ranks, its NCCL communicator (the world side
// of train_plugin_abi.h). Host collectives stage through a device buffer, so the same
// communicator carries the run's small agreements when no MPI launched it.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "cuda/device_memory.h"
#include "cuda/nccl_comm.h"

namespace trainrig::train::cuda {

class DeviceWorld {
public:
    // nccl_id: the bytes of an ncclUniqueId when world > 1. The device is the local rank's
    // (core/local_rank.h); the communicator is set up within kNcclInitLimit or not at all.
    static Result<std::unique_ptr<DeviceWorld>> open(int rank, int world, int local_rank,
                                                     const std::string& nccl_id);
    ~DeviceWorld();
    DeviceWorld(const DeviceWorld&) = delete;
    DeviceWorld& operator=(const DeviceWorld&) = delete;

    int rank() const { return rank_; }
    int world() const { return world_; }
    int device() const { return device_; }
    ncclComm_t comm() const { return comms_.usable() ? comms_[0] : nullptr; }  // null: one rank
    // After an NCCL call on comm() (ncclGroupEnd around the gradient buckets): bounded, and
    // aborts the communicator on a failure (nccl_comm.h).
    Status settle(ncclResult_t issued, const char* call) { return comms_.settle(issued, call); }
    // Waits for stream(), watching the communicator's errors; aborts it on a failure.
    Status wait();
    // The one stream every collective of this world runs on, gradients included: stream order
    // then is issue order, the same on every rank.
    cudaStream_t stream() const { return stream_.get(); }
    // {"index", "name", "pci_bus_id", "compute_capability", "memory_bytes", "free_bytes"}
    Result<std::string> describe() const;

    // In place on host memory: sum (dtype ncclFloat or ncclDouble), or root's bytes to all.
    Status all_reduce(void* data, size_t n, ncclDataType_t dtype);
    Status broadcast(void* data, size_t bytes, int root);
    // After a failure a collective may never complete (a peer is gone): abort the communicator
    // at once, before anything frees memory a stuck NCCL kernel still uses (cudaFree would wait
    // for it for ever). Later collectives fail instead of hanging.
    void abort();

private:
    DeviceWorld() = default;
    Status stage(size_t bytes);
    // Host data through the staging buffers around one NCCL call on the device copy.
    Status collective(void* data, size_t bytes, const char* name,
                      const std::function<ncclResult_t(void*)>& call);
    int rank_ = 0, world_ = 1, device_ = 0;
    trainrig::cuda::NcclComms comms_;
    trainrig::cuda::Stream stream_;
    // Host collectives go host → pinned → device and back, so every wait is a bounded stream
    // wait (a copy into pageable memory would block without limit).
    trainrig::cuda::DeviceMemory staging_;
    trainrig::cuda::PinnedMemory pinned_;
    size_t staging_bytes_ = 0;
};

}  // namespace trainrig::train::cuda

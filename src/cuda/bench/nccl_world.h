// Who takes part in the NCCL benchmark and how their communicators were made: all selected GPUs
// in this process (ncclCommInitAll), or one GPU per process under mpirun (the unique id sent by
// MPI_Bcast) or torchrun-style launchers (RANK/WORLD_SIZE/LOCAL_RANK with NCCL_COMM_ID, where
// every rank's ncclGetUniqueId yields the same id). Each process takes the GPU of its local rank
// (core/local_rank.h); the communicators are non-blocking with deadlines (cuda/nccl_comm.h).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "cuda/bench/gpu_inventory.h"
#include "cuda/nccl_comm.h"

namespace trainrig::cuda {

#ifdef TRAINRIG_HAVE_MPI
// MPI_Init once per process (finalized at exit), with libmpi's symbols made global for Open MPI's
// components; nothing when MPI is already up.
Status ensure_mpi();
#endif

struct NcclRank {
    int rank = 0;
    GpuInfo gpu;
    cudaStream_t stream = nullptr;
};

class NcclWorld {
public:
    // Fails with "needs at least 2 GPUs or ranks" when there would be a single rank.
    static Result<NcclWorld> create(const std::vector<GpuInfo>& gpus);
    NcclWorld(NcclWorld&& o) noexcept;
    NcclWorld& operator=(NcclWorld&&) = delete;
    NcclWorld(const NcclWorld&) = delete;
    NcclWorld& operator=(const NcclWorld&) = delete;
    ~NcclWorld();

    int size() const { return size_; }
    // The ranks this process drives (all of them in single-process mode).
    const std::vector<NcclRank>& local() const { return local_; }
    // Local rank i's communicator; null once aborted.
    ncclComm_t comm(size_t i) const { return comms_[i]; }
    // After a collective outside a group or ncclGroupEnd (nccl_comm.h); aborts on a failure.
    Status settle(ncclResult_t issued, const char* call) { return comms_.settle(issued, call); }
    // Waits for local rank i's stream, watching NCCL's errors; aborts on a failure or timeout.
    Status wait(size_t i) { return comms_.wait(local_[i].stream); }
    // Stops every collective still running, so their buffers can be freed; the world is
    // unusable after.
    void abort() { comms_.abort(); }
    bool multi_process() const { return launcher_ != "single-process"; }
    // Only one process reports: rank 0's.
    bool reports() const { return local_.front().rank == 0; }
    const std::string& launcher() const { return launcher_; }

private:
    NcclWorld() = default;
    int size_ = 0;
    std::vector<NcclRank> local_;
    NcclComms comms_;
    std::string launcher_;
};

}  // namespace trainrig::cuda

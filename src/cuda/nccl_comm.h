// NCCL communicators that never make their caller wait without bound (both plugins: the NCCL
// benchmarks and the trainer). They are created non-blocking (ncclConfig_t blocking = 0), so
// set-up, every call that answers ncclInProgress and every wait for their stream is polled
// against a deadline together with the communicators' asynchronous errors. A failure or a
// passed deadline aborts them (ncclCommAbort stops NCCL's kernels, so the memory those use can
// be freed after); a clean close finalizes first, so ncclCommDestroy has nothing to wait for.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <vector>

#include "core/deadline_poll.h"
#include "core/status.h"

namespace trainrig::cuda {

// How long every rank may take to join a communicator. Ranks start seconds apart, and a large
// job's bootstrap (every rank's address through the root, then the rings and trees) takes long.
inline constexpr std::chrono::seconds kNcclInitLimit{120};
// How long ncclCommFinalize may take to flush: every operation was waited for already, so a
// close that takes this long has a peer that is gone.
inline constexpr std::chrono::seconds kNcclCloseLimit{30};
// A call answering ncclInProgress and a wait for the communicators' stream are bounded by
// kGpuWaitLimit (device_memory.h), as every wait for the GPU.

// One rank this process drives: its index in the communicator and its CUDA device.
struct NcclMember {
    int device = 0;
    int rank = 0;
};

class NcclComms {
public:
    NcclComms() = default;
    // One communicator per member, of the `nranks` ranks that share `id`; several members join
    // in one NCCL group (one process driving several GPUs). Waits at most kNcclInitLimit;
    // on a failure or at the deadline every communicator made is aborted.
    static Result<NcclComms> init(int nranks, const ncclUniqueId& id,
                                  const std::vector<NcclMember>& members);
    NcclComms(NcclComms&& o) noexcept;
    NcclComms& operator=(NcclComms&& o) noexcept;
    NcclComms(const NcclComms&) = delete;
    NcclComms& operator=(const NcclComms&) = delete;
    // Aborts what was not closed: a destructor must not block on a peer.
    ~NcclComms();

    size_t size() const { return comms_.size(); }
    // Member i's communicator; null once aborted or closed.
    ncclComm_t operator[](size_t i) const { return comms_[i]; }
    bool usable() const { return !comms_.empty() && comms_.front() != nullptr; }

    // After a call on these communicators (a collective outside a group, ncclGroupEnd):
    // ncclInProgress is polled until NCCL has taken the work (at most kGpuWaitLimit); only
    // then may more work go to their streams. Aborts on a failure.
    Status settle(ncclResult_t issued, const char* call);
    // Waits for the work queued on `stream`, failing at once on an asynchronous NCCL error and
    // at kGpuWaitLimit; aborts on either.
    Status wait(cudaStream_t stream);
    // ncclCommAbort on each, once; later calls fail instead of reaching NCCL.
    void abort();
    // Finalize, wait for the flush (kNcclCloseLimit), destroy; aborts instead when that fails.
    Status close();

private:
    // Every communicator's asynchronous state as one poll.
    PollOutcome poll(const char* what) const;
    Status aborted_error() const;
    std::vector<ncclComm_t> comms_;
};

}  // namespace trainrig::cuda

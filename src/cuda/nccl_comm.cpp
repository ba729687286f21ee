// Non-blocking NCCL communicators: set-up, calls, waits and close, each bounded by a deadline.
#include "cuda/nccl_comm.h"

#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/device_memory.h"
#include "cuda/nccl_group.h"

namespace trainrig::cuda {
namespace {

constexpr const char* kPeerHint =
    "another rank may have failed, stopped or be unreachable; NCCL_DEBUG=WARN on every rank "
    "shows which";

bool accepted(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

}  // namespace

Result<NcclComms> NcclComms::init(int nranks, const ncclUniqueId& id,
                                  const std::vector<NcclMember>& members) {
    NcclComms out;  // declared first: its destructor aborts whatever an early return leaves
    out.comms_.assign(members.size(), nullptr);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    {
        NcclGroup group;
        NCCL_TRY(group.started());
        for (size_t i = 0; i < members.size(); ++i) {
            CUDA_TRY(cudaSetDevice(members[i].device));
            const ncclResult_t r =
                ncclCommInitRankConfig(&out.comms_[i], nranks, id, members[i].rank, &config);
            if (!accepted(r)) return nccl_error(r, "ncclCommInitRankConfig", __FILE__, __LINE__);
        }
        const ncclResult_t ended = group.end();
        if (!accepted(ended)) return nccl_error(ended, "ncclGroupEnd", __FILE__, __LINE__);
    }
    TRAINRIG_TRY(
        poll_until([&] { return out.poll("ncclCommInitRankConfig"); }, [&] { out.abort(); },
                   PollLimit{kNcclInitLimit, "the NCCL communicator's set-up", kPeerHint}));
    return out;
}

NcclComms::NcclComms(NcclComms&& o) noexcept : comms_(std::exchange(o.comms_, {})) {}

NcclComms& NcclComms::operator=(NcclComms&& o) noexcept {
    if (this != &o) {
        abort();
        comms_ = std::exchange(o.comms_, {});
    }
    return *this;
}

NcclComms::~NcclComms() { abort(); }

PollOutcome NcclComms::poll(const char* what) const {
    if (!usable()) return aborted_error();
    std::vector<PollOutcome> each;
    each.reserve(comms_.size());
    for (ncclComm_t c : comms_) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t r = ncclCommGetAsyncError(c, &state);
        if (r != ncclSuccess)
            each.emplace_back(nccl_error(r, "ncclCommGetAsyncError", __FILE__, __LINE__));
        else if (state == ncclInProgress)
            each.emplace_back(std::nullopt);
        else if (state != ncclSuccess)
            each.emplace_back(nccl_error(state, what, __FILE__, __LINE__));
        else
            each.emplace_back(Status{});
    }
    return combine_polls(each);
}

Status NcclComms::aborted_error() const {
    return Status(Errc::kIo, "the NCCL communicator was aborted after an earlier failure");
}

Status NcclComms::settle(ncclResult_t issued, const char* call) {
    if (!usable()) return aborted_error();
    if (issued == ncclSuccess) return ok_status();
    if (issued != ncclInProgress) {
        abort();
        return nccl_error(issued, call, __FILE__, __LINE__);
    }
    return poll_until([&] { return poll(call); }, [&] { abort(); },
                      PollLimit{kGpuWaitLimit, call, kPeerHint});
}

Status NcclComms::wait(cudaStream_t stream) {
    if (!usable()) return aborted_error();
    constexpr const char* kWhat = "the work queued on an NCCL stream";
    return poll_until(
        [&]() -> PollOutcome {
            // A peer's failure shows here first; the stream alone would only stop moving.
            if (PollOutcome nccl = poll("an NCCL operation"); nccl && !nccl->ok()) return nccl;
            return cuda_poll(cudaStreamQuery(stream), kWhat);
        },
        [&] { abort(); }, PollLimit{kGpuWaitLimit, kWhat, kPeerHint});
}

void NcclComms::abort() {
    for (ncclComm_t& c : comms_)
        if (c != nullptr) (void)ncclCommAbort(std::exchange(c, nullptr));
}

Status NcclComms::close() {
    if (!usable()) return ok_status();
    for (ncclComm_t c : comms_)
        if (const ncclResult_t r = ncclCommFinalize(c); !accepted(r)) {
            abort();
            return nccl_error(r, "ncclCommFinalize", __FILE__, __LINE__);
        }
    TRAINRIG_TRY(
        poll_until([&] { return poll("ncclCommFinalize"); }, [&] { abort(); },
                   PollLimit{kNcclCloseLimit, "closing the NCCL communicator", kPeerHint}));
    // Finalized: destroy only frees what is local, it has nothing left to wait for.
    for (ncclComm_t& c : comms_) (void)ncclCommDestroy(std::exchange(c, nullptr));
    return ok_status();
}

}  // namespace trainrig::cuda

// Host -> device batches through pinned memory, double-buffered: while the GPU works on batch k
// (copied asynchronously on the caller's stream), the CPU fills batch k + 1 into the other
// pinned buffer. Pageable memory would make cudaMemcpyAsync synchronous (a staging copy), which
// is the stall the training-machine article (§4.3) measures; `bench h2d` quantifies it.
// Built only with CUDA (TRAINRIG_WITH_CUDA).
#pragma once

#include <cstdint>

#include "core/status.h"
#include "data/loader/window_loader.h"

struct CUstream_st;
struct CUevent_st;

namespace trainrig::data {

class PinnedPrefetcher {
public:
    static Result<PinnedPrefetcher> create(WindowLoader& loader, CUstream_st* stream);
    ~PinnedPrefetcher();
    PinnedPrefetcher(PinnedPrefetcher&&) noexcept;
    PinnedPrefetcher& operator=(PinnedPrefetcher&&) = delete;
    PinnedPrefetcher(const PinnedPrefetcher&) = delete;

    // The next batch (B x (T + 1) token ids) on the device, valid for work queued on the
    // stream until the call after next. Fills the host buffer, then queues the copy.
    Result<const uint32_t*> next();

private:
    PinnedPrefetcher() = default;
    WindowLoader* loader_ = nullptr;
    CUstream_st* stream_ = nullptr;
    uint32_t* host_[2] = {nullptr, nullptr};
    uint32_t* device_[2] = {nullptr, nullptr};
    CUevent_st* copied_[2] = {nullptr, nullptr};
    int current_ = 0;
};

}  // namespace trainrig::data

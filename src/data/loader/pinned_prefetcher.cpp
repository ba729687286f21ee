#include "data/loader/pinned_prefetcher.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace trainrig::data {
namespace {

Status cuda_status(cudaError_t e, const char* what) {
    return {Errc::kUnsupported, fmt::format("{} failed: {}", what, cudaGetErrorString(e))};
}

}  // namespace

Result<PinnedPrefetcher> PinnedPrefetcher::create(WindowLoader& loader, CUstream_st* stream) {
    PinnedPrefetcher p;
    p.loader_ = &loader;
    p.stream_ = stream;
    const size_t bytes = loader.batch_tokens() * sizeof(uint32_t);
    for (int k = 0; k < 2; ++k) {
        if (auto e =
                cudaHostAlloc(reinterpret_cast<void**>(&p.host_[k]), bytes, cudaHostAllocDefault);
            e != cudaSuccess)
            return cuda_status(e, "cudaHostAlloc");
        if (auto e = cudaMalloc(reinterpret_cast<void**>(&p.device_[k]), bytes); e != cudaSuccess)
            return cuda_status(e, "cudaMalloc");
        if (auto e = cudaEventCreateWithFlags(&p.copied_[k], cudaEventDisableTiming);
            e != cudaSuccess)
            return cuda_status(e, "cudaEventCreate");
    }
    return p;
}

PinnedPrefetcher::PinnedPrefetcher(PinnedPrefetcher&& o) noexcept
    : loader_(o.loader_), stream_(o.stream_), current_(o.current_) {
    for (int k = 0; k < 2; ++k) {
        host_[k] = o.host_[k];
        device_[k] = o.device_[k];
        copied_[k] = o.copied_[k];
        o.host_[k] = nullptr;
        o.device_[k] = nullptr;
        o.copied_[k] = nullptr;
    }
}

PinnedPrefetcher::~PinnedPrefetcher() {
    for (int k = 0; k < 2; ++k) {
        if (copied_[k] != nullptr) {
            cudaEventSynchronize(copied_[k]);
            cudaEventDestroy(copied_[k]);
        }
        if (host_[k] != nullptr) cudaFreeHost(host_[k]);
        if (device_[k] != nullptr) cudaFree(device_[k]);
    }
}

Result<const uint32_t*> PinnedPrefetcher::next() {
    const int k = current_;
    current_ ^= 1;
    // The host buffer may still be the source of the copy queued two calls ago.
    if (auto e = cudaEventSynchronize(copied_[k]); e != cudaSuccess)
        return cuda_status(e, "waiting for the previous copy");
    loader_->next_batch(host_[k]);
    const size_t bytes = loader_->batch_tokens() * sizeof(uint32_t);
    if (auto e = cudaMemcpyAsync(device_[k], host_[k], bytes, cudaMemcpyHostToDevice, stream_);
        e != cudaSuccess)
        return cuda_status(e, "cudaMemcpyAsync");
    if (auto e = cudaEventRecord(copied_[k], stream_); e != cudaSuccess)
        return cuda_status(e, "cudaEventRecord");
    return static_cast<const uint32_t*>(device_[k]);
}

}  // namespace trainrig::data

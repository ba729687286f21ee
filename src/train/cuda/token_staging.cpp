#include "train/cuda/token_staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

namespace trainrig::train::cuda {

namespace tc = trainrig::cuda;

Result<TokenStaging> TokenStaging::create(size_t max_tokens) {
    TokenStaging t;
    t.max_tokens_ = max_tokens;
    t.slot_bytes_ = 3 * max_tokens * sizeof(uint32_t);  // inputs, their order, targets
    TRAINRIG_TRY(tc::move_into(tc::make_stream(), t.stream_));
    for (int s = 0; s < 2; ++s) {
        TRAINRIG_TRY(tc::move_into(tc::pinned_alloc(t.slot_bytes_), t.pinned_[s]));
        TRAINRIG_TRY(tc::move_into(tc::device_alloc(t.slot_bytes_), t.device_[s]));
        cudaEvent_t e = nullptr;  // for ordering only: no timestamps
        CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        t.copied_[s] = tc::Event(e);
    }
    return t;
}

Status TokenStaging::stage(const uint32_t* inputs, const uint32_t* targets, int B, int T) {
    staged_ = false;
    const size_t n = static_cast<size_t>(B) * static_cast<size_t>(T);
    if (inputs == nullptr) return Status(Errc::kInternal, "a batch without inputs was staged");
    if (B < 1 || T < 1 || n > max_tokens_)
        return Status(
            Errc::kInvalidInput,
            fmt::format("a batch of {} x {} is larger than the model was set up for", B, T));
    slot_ ^= 1;
    const int s = slot_;
    if (used_[s]) TRAINRIG_TRY(tc::wait_event(copied_[s].get()));
    auto* host = static_cast<uint32_t*>(pinned_[s].get());
    std::memcpy(host, inputs, n * sizeof(uint32_t));
    // The rows in token order, ties in row order (encoder_backward adds each token's rows so).
    uint32_t* order = host + n;
    std::iota(order, order + n, uint32_t{0});
    std::stable_sort(order, order + n,
                     [inputs](uint32_t a, uint32_t b) { return inputs[a] < inputs[b]; });
    if (targets) std::memcpy(host + 2 * n, targets, n * sizeof(uint32_t));
    const size_t bytes = (targets ? 3 : 2) * n * sizeof(uint32_t);
    CUDA_TRY(cudaMemcpyAsync(device_[s].get(), host, bytes, cudaMemcpyHostToDevice, stream_.get()));
    CUDA_TRY(cudaEventRecord(copied_[s].get(), stream_.get()));
    used_[s] = true;
    staged_ = true;
    targets_ = targets != nullptr;
    B_ = B;
    T_ = T;
    return ok_status();
}

Result<DeviceTokens> TokenStaging::take(cudaStream_t compute, int B, int T) {
    if (!staged_ || B != B_ || T != T_)
        return Status(Errc::kInternal, "a forward was asked for a batch that was not staged");
    staged_ = false;
    CUDA_TRY(cudaStreamWaitEvent(compute, copied_[slot_].get(), 0));
    const auto* d = static_cast<const uint32_t*>(device_[slot_].get());
    const size_t n = static_cast<size_t>(B_) * static_cast<size_t>(T_);
    return DeviceTokens{d, d + n, targets_ ? d + 2 * n : nullptr};
}

}  // namespace trainrig::train::cuda

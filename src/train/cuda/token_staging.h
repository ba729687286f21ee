// Token micro-batches on their way to the device: two pinned host slots and their device
// copies, filled on a copy stream of their own so a copy overlaps the work already queued on the
// compute stream. A slot's pinned memory is rewritten only after its previous copy finished; its
// device copy is read once, by the forward that takes it (GptCuda copies the tokens it keeps),
// and that forward waits for the GPU, so two slots suffice.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "cuda/device_memory.h"

namespace trainrig::train::cuda {

struct DeviceTokens {
    const uint32_t* inputs = nullptr;
    const uint32_t* order = nullptr;    // the rows stably sorted by input token
    const uint32_t* targets = nullptr;  // null when the batch had none
};

class TokenStaging {
public:
    // Room for micro-batches of up to max_tokens (B·T) inputs and as many targets.
    static Result<TokenStaging> create(size_t max_tokens);

    // Copies B·T inputs, their rows in token order (for the embedding's backward) and targets,
    // if any, into the next slot and queues their copy.
    Status stage(const uint32_t* inputs, const uint32_t* targets, int B, int T);
    // Makes `compute` wait for the staged B x T micro-batch's copy and hands out its device
    // tokens; fails when none of that shape is staged.
    Result<DeviceTokens> take(cudaStream_t compute, int B, int T);

    size_t device_bytes() const { return 2 * slot_bytes_; }

private:
    size_t max_tokens_ = 0, slot_bytes_ = 0;
    trainrig::cuda::Stream stream_;
    trainrig::cuda::PinnedMemory pinned_[2];
    trainrig::cuda::DeviceMemory device_[2];
    trainrig::cuda::Event copied_[2];
    bool used_[2] = {false, false};
    int slot_ = 0;
    bool staged_ = false, targets_ = false;
    int B_ = 0, T_ = 0;
};

}  // namespace trainrig::train::cuda

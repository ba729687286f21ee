// The device's own clock for each phase of a training step. The plugin's calls return once their
// work is queued (forward waits only for its loss), so host clocks around them would charge one
// phase's kernels to the next; CUDA events recorded on the streams at each phase's edges time
// what the GPU did. A span may end on another stream than it began on: the exposed gradient
// all-reduce starts where backward ends on the compute stream and ends on the world's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "core/status.h"
#include "cuda/device_memory.h"

namespace trainrig::train::cuda {

enum class Phase { kForward, kBackward, kComm, kOptimizer };
inline constexpr size_t kPhaseCount = 4;

class PhaseEvents {
public:
    // Opens a span of `phase` at this point of `stream`'s queue.
    Status begin(Phase phase, cudaStream_t stream);
    // Closes the open span of `phase` at this point of `stream`'s queue; none open: no effect.
    Status end(Phase phase, cudaStream_t stream);
    // Seconds per phase (in Phase order) summed over the spans closed since the last take or
    // clear, after waiting for them. A span whose end the device reached before its start (an
    // all-reduce that finished while backward still ran) counts 0. Open spans are dropped.
    Result<std::array<double, kPhaseCount>> take();
    // Forgets every span without waiting (the events are recorded again later).
    void clear();

private:
    static constexpr size_t kMaxSpans = 4096;
    struct Span {
        Phase phase;
        cudaEvent_t start = nullptr, end = nullptr;
    };
    Result<cudaEvent_t> record(cudaStream_t stream);
    std::vector<trainrig::cuda::Event> pool_;  // reused step after step
    size_t used_ = 0;
    std::vector<Span> spans_;
};

}  // namespace trainrig::train::cuda

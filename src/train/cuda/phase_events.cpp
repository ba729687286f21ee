#include "train/cuda/phase_events.h"

namespace trainrig::train::cuda {

using trainrig::cuda::wait_event;

Result<cudaEvent_t> PhaseEvents::record(cudaStream_t stream) {
    if (used_ == pool_.size()) {
        auto e = trainrig::cuda::make_event();
        if (!e.ok()) return e.status();
        pool_.push_back(std::move(e).value());
    }
    cudaEvent_t e = pool_[used_++].get();
    CUDA_TRY(cudaEventRecord(e, stream));
    return e;
}

Status PhaseEvents::begin(Phase phase, cudaStream_t stream) {
    // A caller that never takes (a test driving forward and backward alone) must not grow the
    // pool without bound; the oldest spans are then forgotten.
    if (spans_.size() >= kMaxSpans) clear();
    auto e = record(stream);
    if (!e.ok()) return e.status();
    spans_.push_back(Span{phase, *e, nullptr});
    return ok_status();
}

Status PhaseEvents::end(Phase phase, cudaStream_t stream) {
    for (auto it = spans_.rbegin(); it != spans_.rend(); ++it) {
        if (it->phase != phase || it->end != nullptr) continue;
        auto e = record(stream);
        if (!e.ok()) return e.status();
        it->end = *e;
        return ok_status();
    }
    return ok_status();
}

Result<std::array<double, kPhaseCount>> PhaseEvents::take() {
    std::array<double, kPhaseCount> seconds{};
    for (const Span& s : spans_) {
        if (s.end == nullptr) continue;
        TRAINRIG_TRY(wait_event(s.start));
        TRAINRIG_TRY(wait_event(s.end));
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, s.start, s.end));
        if (ms > 0) seconds[static_cast<size_t>(s.phase)] += ms / 1e3;
    }
    clear();
    return seconds;
}

void PhaseEvents::clear() {
    spans_.clear();
    used_ = 0;
}

}  // namespace trainrig::train::cuda

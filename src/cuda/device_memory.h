// Owning handles for what the benchmarks allocate (device and pinned host memory, streams,
// events), so every early return and every interruption frees what was taken.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <utility>

#include "core/deadline_poll.h"
#include "core/status.h"
#include "cuda/cuda_check.h"

namespace trainrig::cuda {

// Moves leave the source empty; the deleter runs once on a non-null handle.
template <class T, class Deleter>
class Owned {
public:
    Owned() = default;
    explicit Owned(T h) : h_(h) {}
    Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
    Owned& operator=(Owned&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, T{});
        }
        return *this;
    }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    ~Owned() { reset(); }

    T get() const { return h_; }
    void reset() {
        if (h_ != T{}) Deleter{}(std::exchange(h_, T{}));
    }

private:
    T h_{};
};

// A release that fails leaves nothing for the next launch check (forget_failure).
struct FreeDevice {
    void operator()(void* p) const { forget_failure(cudaFree(p)); }
};
struct FreeHost {
    void operator()(void* p) const { forget_failure(cudaFreeHost(p)); }
};
struct FreePageable {
    void operator()(void* p) const { std::free(p); }
};
struct DestroyStream {
    void operator()(cudaStream_t s) const { forget_failure(cudaStreamDestroy(s)); }
};
struct DestroyEvent {
    void operator()(cudaEvent_t e) const { forget_failure(cudaEventDestroy(e)); }
};

using DeviceMemory = Owned<void*, FreeDevice>;
using PinnedMemory = Owned<void*, FreeHost>;
using PageableMemory = Owned<void*, FreePageable>;
using Stream = Owned<cudaStream_t, DestroyStream>;
using Event = Owned<cudaEvent_t, DestroyEvent>;

// On the current device. Out of memory is cudaErrorMemoryAllocation, cleared from the runtime's
// last error as it is returned (failed_call): the next size's kernels must not inherit it.
inline Result<DeviceMemory> device_alloc(size_t bytes) {
    void* p = nullptr;
    CUDA_TRY(cudaMalloc(&p, bytes));
    return DeviceMemory(p);
}

inline Result<PinnedMemory> pinned_alloc(size_t bytes) {
    void* p = nullptr;
    CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    return PinnedMemory(p);
}

// Page-aligned, so pageable and pinned copies start from the same alignment.
inline Result<PageableMemory> pageable_alloc(size_t bytes) {
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p == nullptr) return Status{Errc::kIo, "out of host memory for a pageable buffer"};
    return PageableMemory(p);
}

// Moves a Result's value into `into`, or returns its failure: TRAINRIG_TRY(move_into(make(), x)).
template <class T>
Status move_into(Result<T> r, T& into) {
    if (!r.ok()) return r.status();
    into = std::move(r).value();
    return Status{};
}

// Non-blocking: the benchmarks' copies must not wait on the legacy default stream.
inline Result<Stream> make_stream() {
    cudaStream_t s = nullptr;
    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
}

inline Result<Event> make_event() {
    cudaEvent_t e = nullptr;
    CUDA_TRY(cudaEventCreate(&e));
    return Event(e);
}

// A stream with the two events that time the work queued on it.
struct TimedStream {
    Stream stream;
    Event start, stop;
    cudaStream_t get() const { return stream.get(); }
};

inline Result<TimedStream> make_timed_stream() {
    auto s = make_stream();
    if (!s.ok()) return s.status();
    auto a = make_event();
    if (!a.ok()) return a.status();
    auto b = make_event();
    if (!b.ok()) return b.status();
    return TimedStream{std::move(s).value(), std::move(a).value(), std::move(b).value()};
}

// How long a wait for the GPU may take before the work is taken to be hung. No timed operation
// of the benchmarks comes near it; a hung kernel or a peer that never arrives would otherwise
// keep the process (and a GPU machine's whole check run) waiting for ever.
inline constexpr std::chrono::seconds kGpuWaitLimit{120};

// A CUDA query's answer as a poll (core/deadline_poll.h): cudaErrorNotReady is "not yet".
inline PollOutcome cuda_poll(cudaError_t e, const char* what) {
    if (e == cudaErrorNotReady) return std::nullopt;
    if (e == cudaSuccess) return Status{};
    return failed_call(e, what, __FILE__, __LINE__);  // read, so no later call reports it
}

// The bound on every wait for the GPU, naming what was waited for.
inline PollLimit gpu_wait_limit(const char* what) {
    return {kGpuWaitLimit, what,
            "the GPU may be hung: see nvidia-smi and Xid lines in the kernel log"};
}

// Waits for `query` to stop answering cudaErrorNotReady, polling, so the wait is bounded and a
// hang is reported instead of waited on.
template <class Query>
Status wait_gpu(Query query, const char* what) {
    return poll_until([&] { return cuda_poll(query(), what); }, [] {}, gpu_wait_limit(what));
}

inline Status wait_stream(cudaStream_t s) {
    return wait_gpu([s] { return cudaStreamQuery(s); }, "the work queued on a stream");
}
inline Status wait_event(cudaEvent_t e) {
    return wait_gpu([e] { return cudaEventQuery(e); }, "a timed operation");
}

// Milliseconds between two recorded events, after waiting for the second.
inline Result<double> elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
    TRAINRIG_TRY(wait_event(stop));
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms);
}

}  // namespace trainrig::cuda

// Device and pinned memory, copies and fills. Device memory is host memory of exactly the size
// asked for, so AddressSanitizer sees a kernel read past its end; it starts as 0xff bytes (NaN
// in every float format), not zeros, so code that assumes cudaMalloc clears memory fails here.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/api_common.h"
#include "runtime/race_check.h"
#include "runtime/stream.h"

using namespace trainrig::emu;

namespace {

enum class Side { kPageable, kPinned, kDevice };

struct Range {
    Side side = Side::kPageable;
    int device = -1;
    bool whole = true;  // [p, p + bytes) lies inside the allocation p is in
};

Range classify(const void* p, size_t bytes) {
    Emulator& emu = Emulator::get();
    Allocation a;
    if (!emu.find_allocation(p, 1, &a)) return {};
    Range r;
    r.side = a.device >= 0 ? Side::kDevice : Side::kPinned;
    r.device = a.device;
    r.whole = emu.find_allocation(p, bytes, nullptr);
    return r;
}

bool is_device(const Range& r) { return r.side == Side::kDevice; }

// The copy's kind checked against where its pointers lie, as a runtime with unified addressing
// does; cudaMemcpyDefault takes the kind from the pointers.
cudaError_t check_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, Range* d,
                       Range* s) {
    *d = classify(dst, count);
    *s = classify(src, count);
    if ((is_device(*d) && !d->whole) || (is_device(*s) && !s->whole)) return cudaErrorInvalidValue;
    switch (kind) {
        case cudaMemcpyHostToDevice:
            return is_device(*d) && !is_device(*s) ? cudaSuccess : cudaErrorInvalidValue;
        case cudaMemcpyDeviceToHost:
            return is_device(*s) && !is_device(*d) ? cudaSuccess : cudaErrorInvalidValue;
        case cudaMemcpyDeviceToDevice:
            return is_device(*s) && is_device(*d) ? cudaSuccess : cudaErrorInvalidValue;
        case cudaMemcpyHostToHost:
            return !is_device(*s) && !is_device(*d) ? cudaSuccess : cudaErrorInvalidValue;
        case cudaMemcpyDefault:
            return cudaSuccess;
    }
    return cudaErrorInvalidValue;
}

// Pageable host memory: a copy from it takes the bytes before the call returns (they are staged
// for the DMA engine); a copy to it is done when the call returns. Pinned memory: neither.
cudaError_t copy_on(Stream& stream, void* dst, const void* src, size_t count, const Range& d,
                    const Range& s) {
    if (count == 0) return cudaSuccess;
    if (s.side == Side::kPageable && is_device(d)) {
        auto staged = std::make_shared<std::vector<unsigned char>>(
            static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + count);
        enqueue_ordered(stream, [dst, staged] {
            const RaceCheckWorld alone;
            std::memcpy(dst, staged->data(), staged->size());
        });
        return cudaSuccess;
    }
    const StreamPoint done = enqueue_ordered(stream, [dst, src, count] {
        const RaceCheckWorld alone;
        std::memmove(dst, src, count);
    });
    if (d.side == Side::kPageable && is_device(s)) {
        done.stream->wait(done.ticket);
        return stream.gpu().sticky_error();
    }
    return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
    TRAINRIG_EMU_ENTER(gpu);
    *ptr = nullptr;
    if (size == 0) return cudaSuccess;
    size_t used = gpu->allocated.load();
    do {
        if (size > gpu->memory - used) return set_last_error(cudaErrorMemoryAllocation);
    } while (!gpu->allocated.compare_exchange_weak(used, used + size));
    void* p = nullptr;  // posix_memalign: any size, where aligned_alloc wants a multiple
    if (::posix_memalign(&p, 256, size) != 0) {
        gpu->allocated -= size;
        return set_last_error(cudaErrorMemoryAllocation);
    }
    std::memset(p, 0xff, size);
    Emulator::get().add_allocation({reinterpret_cast<uintptr_t>(p), size, gpu->index});
    *ptr = p;
    return cudaSuccess;
}

// Like the runtime's, it waits for the device first: no kernel still reads what is freed.
cudaError_t cudaFree(void* ptr) {
    if (ptr == nullptr) return cudaSuccess;
    Allocation a;
    if (!Emulator::get().find_allocation(ptr, 1, &a) ||
        a.begin != reinterpret_cast<uintptr_t>(ptr) || a.device < 0)
        return set_last_error(cudaErrorInvalidValue);
    wait_for_device(*Emulator::get().gpu(a.device));
    Emulator::get().remove_allocation(ptr, nullptr);
    Emulator::get().gpu(a.device)->allocated -= a.size;
    std::free(ptr);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
    void* p = nullptr;
    if (::posix_memalign(&p, 4096, size == 0 ? 1 : size) != 0)
        return set_last_error(cudaErrorMemoryAllocation);
    Emulator::get().add_allocation({reinterpret_cast<uintptr_t>(p), size == 0 ? 1 : size, -1});
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, 0); }

cudaError_t cudaFreeHost(void* ptr) {
    Allocation a;
    if (ptr == nullptr) return cudaSuccess;
    if (!Emulator::get().remove_allocation(ptr, &a) || a.device >= 0)
        return set_last_error(cudaErrorInvalidValue);
    std::free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    TRAINRIG_EMU_ENTER(gpu);
    *total = gpu->memory;
    *free = gpu->memory - gpu->allocated.load();
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    Range d, r;
    if (const cudaError_t e = check_copy(dst, src, count, kind, &d, &r); e != cudaSuccess)
        return set_last_error(e);
    return set_last_error(copy_on(*s, dst, src, count, d, r));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(nullptr);
    Range d, r;
    if (const cudaError_t e = check_copy(dst, src, count, kind, &d, &r); e != cudaSuccess)
        return set_last_error(e);
    if (const cudaError_t e = copy_on(*s, dst, src, count, d, r); e != cudaSuccess)
        return set_last_error(e);
    s->wait_all();
    return set_last_error(gpu->sticky_error());
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                size_t count, cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    const Range d = classify(dst, count), r = classify(src, count);
    if (!is_device(d) || !d.whole || d.device != dst_device || !is_device(r) || !r.whole ||
        r.device != src_device)
        return set_last_error(cudaErrorInvalidValue);
    return set_last_error(copy_on(*s, dst, src, count, d, r));
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    const Range d = classify(ptr, count);
    if (count == 0) return cudaSuccess;
    if (!is_device(d) || !d.whole) return set_last_error(cudaErrorInvalidValue);
    enqueue_ordered(*s, [ptr, value, count] {
        const RaceCheckWorld alone;
        std::memset(ptr, value, count);
    });
    return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (const cudaError_t e = cudaMemsetAsync(ptr, value, count, nullptr); e != cudaSuccess)
        return e;
    resolve_stream(nullptr)->wait_all();
    return cudaSuccess;
}

}  // extern "C"

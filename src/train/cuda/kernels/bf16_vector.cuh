// What the elementwise and row kernels share: bf16 loads and stores of one element or of eight
// at once (one 16-byte access), the alignment test that picks between them, and a grid size
// capped for grid-stride loops.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

namespace trainrig::train::cuda::vec {

using bf16 = __nv_bfloat16;

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Blocks of `per_block` threads to cover `threads`, at most `max_blocks` (the loops stride on).
inline unsigned blocks_for(size_t threads, int per_block, size_t max_blocks) {
    const size_t blocks = (threads + static_cast<size_t>(per_block) - 1) / per_block;
    return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

// kVec = 8 needs p 16-byte aligned.
template <int kVec>
__device__ inline void load(float (&f)[kVec], const bf16* p) {
    if constexpr (kVec == 1) {
        f[0] = __bfloat162float(*p);
    } else {
        static_assert(kVec == 8, "one 16-byte access");
        alignas(16) bf16 h[8];
        *reinterpret_cast<uint4*>(h) = *reinterpret_cast<const uint4*>(p);
#pragma unroll
        for (int k = 0; k < 8; ++k) f[k] = __bfloat162float(h[k]);
    }
}

template <int kVec>
__device__ inline void store(bf16* p, const float (&f)[kVec]) {
    if constexpr (kVec == 1) {
        *p = __float2bfloat16(f[0]);
    } else {
        static_assert(kVec == 8, "one 16-byte access");
        alignas(16) bf16 h[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) h[k] = __float2bfloat16(f[k]);
        *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(h);
    }
}

}  // namespace trainrig::train::cuda::vec

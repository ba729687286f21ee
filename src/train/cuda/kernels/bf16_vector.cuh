// What the elementwise and row kernels share: bf16 loads and stores of one element or of eight
// at once (one 16-byte access), the alignment test that picks between them, the grid of the
// grid-stride elementwise kernels, and a warp's sum.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

namespace trainrig::train::cuda::vec {

using bf16 = __nv_bfloat16;

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The elementwise kernels (encoder, GELU, SwiGLU): kThreads a block, and blocks to cover
// `threads`, at most kMaxBlocks: enough to fill an H100/H200 (132 SMs, 8 blocks of 256 each)
// several times over; their grid-stride loops cover larger inputs.
namespace elementwise {
constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 4096;
inline unsigned blocks_for(size_t threads) {
    const size_t blocks = (threads + static_cast<size_t>(kThreads) - 1) / kThreads;
    return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}
}  // namespace elementwise

// The sum of v over the 32 lanes of a full warp, in every lane, added in the same order in each.
__device__ inline float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
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

// The mean of f(x) over a row of C values, by one full warp (lane takes the vectors at
// lane·kVec, stepping 32·kVec; kVec = 8 needs C % 8 == 0 and x 16-byte aligned), in every lane
// and added in the same order in each run.
template <int kVec, class F>
__device__ inline float row_mean(const bf16* x, int C, int lane, F f) {
    float sum = 0.0f;
    for (int c = lane * kVec; c < C; c += 32 * kVec) {
        float xv[kVec];
        load(xv, x + c);
#pragma unroll
        for (int k = 0; k < kVec; ++k) sum += f(xv[k]);
    }
    return warp_sum(sum) / static_cast<float>(C);
}

// Row `row` (C wide) of a normalization's backward pass: its input x, the output's gradient dy,
// and the input's gradient dx (fp32, added to).
struct RowGrad {
    const bf16* x;
    const bf16* dy;
    float* dx;
};
__device__ inline RowGrad row_grad(const bf16* inp, const bf16* dout, float* dinp, size_t row,
                                   int C) {
    const size_t at = row * static_cast<size_t>(C);
    return {inp + at, dout + at, dinp + at};
}

// An elementwise kernel's file takes all it uses from here with one
// `using namespace vec::elementwise;`.
namespace elementwise {
using vec::aligned16;
using vec::load;
using vec::store;
}  // namespace elementwise

}  // namespace trainrig::train::cuda::vec

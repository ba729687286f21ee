// Rotary position embedding (Su et al. 2021, arXiv:2104.09864) in Llama's rotate-half layout,
// in place on the q and k heads of each qkv row: channel i of a head pairs with i + hd/2 and
// the pair turns by the angle of (position, i), read from fp32 cos/sin tables of (T, hd/2) that
// the host computes once (src/train/rope_table.h), so both backends rotate by the same angles.
// Backward applies the transposed rotation (the angle negated) to dq and dk. bf16 in and out,
// fp32 arithmetic, the CPU reference's operation order (src/train/cpu/rope.cpp).
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill an H100/H200 several times over; the loop strides past it.
constexpr size_t kMaxBlocks = 4096;

// One thread per channel pair of one head of one row. In a row [q: NH | k: KVH | v: KVH] the
// first NH + KVH heads are exactly q and k, so head h of the pass sits at h·hd whichever it is.
// Consecutive threads take consecutive pairs of a head: every access of a warp is contiguous.
__global__ void __launch_bounds__(kThreads)
    rope_kernel(bf16* qkv, const float* cos, const float* sin, int T, int heads, int width, int hd,
                float sign, size_t total) {
    const int half = hd / 2;
    const size_t per_row = static_cast<size_t>(heads) * half;
    for (size_t idx = grid_thread(); idx < total; idx += grid_threads()) {
        const size_t n = idx / per_row;
        const size_t rem = idx - n * per_row;
        const int h = static_cast<int>(rem / half);
        const int i = static_cast<int>(rem - static_cast<size_t>(h) * half);
        const size_t at = (n % static_cast<size_t>(T)) * half + i;
        const float c = cos[at], s = sign * sin[at];
        bf16* a = qkv + n * width + static_cast<size_t>(h) * hd + i;
        bf16* b = a + half;
        const float x1 = __bfloat162float(*a), x2 = __bfloat162float(*b);
        *a = __float2bfloat16(x1 * c - x2 * s);
        *b = __float2bfloat16(x2 * c + x1 * s);
    }
}

void rope_launch(bf16* qkv, const float* cos, const float* sin, int B, int T, int NH, int KVH,
                 int hd, float sign, cudaStream_t stream) {
    if (B <= 0 || T <= 0 || NH <= 0 || KVH <= 0 || hd < 2) return;
    const int heads = NH + KVH, width = (NH + 2 * KVH) * hd;
    const size_t total = static_cast<size_t>(B) * T * heads * (hd / 2);
    const size_t blocks = (total + kThreads - 1) / kThreads;
    trainrig::cuda::launch(
        rope_kernel,
        {static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0, stream},
        qkv, cos, sin, T, heads, width, hd, sign, total);
}

}  // namespace

void rope_forward(bf16* qkv, const float* cos, const float* sin, int B, int T, int NH, int KVH,
                  int hd, cudaStream_t stream) {
    rope_launch(qkv, cos, sin, B, T, NH, KVH, hd, 1.0f, stream);
}

void rope_backward(bf16* dqkv, const float* cos, const float* sin, int B, int T, int NH, int KVH,
                   int hd, cudaStream_t stream) {
    rope_launch(dqkv, cos, sin, B, T, NH, KVH, hd, -1.0f, stream);
}

}  // namespace trainrig::train::cuda

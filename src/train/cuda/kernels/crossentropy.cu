// The classifier's softmax cross-entropy over the first V of Vp logits per row, one block per
// row: forward finds the row's max, then the sum of exponentials (two passes, the second mostly
// from L2) and keeps the log-sum-exp; backward rewrites the logits with their gradient from it.
#include <cmath>
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/bf16_vector.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

using vec::aligned16;

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets the block's result. The leading barrier lets consecutive calls share
// `scratch` (kWarps floats): nobody overwrites it while a previous call is still reading it.
template <class Op>
__device__ float block_reduce(float v, float* scratch, Op op) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
    for (int i = 1; i < kWarps; ++i) v = op(v, scratch[i]);
    return v;
}

// Calls f(j, logit) for every j < V of row z, each once. kVec = 8 needs Vp % 8 == 0 and a
// 16-byte aligned base, so a vector starting below V ends within the row.
template <int kVec, class F>
__device__ void for_each_logit(const bf16* z, int V, F f) {
    for (int j = static_cast<int>(threadIdx.x) * kVec; j < V; j += kThreads * kVec) {
        if constexpr (kVec == 1) {
            f(j, __bfloat162float(z[j]));
        } else {
            static_assert(kVec == 8, "one 16-byte access");
            alignas(16) bf16 h[8];
            *reinterpret_cast<uint4*>(h) = *reinterpret_cast<const uint4*>(z + j);
#pragma unroll
            for (int k = 0; k < 8; ++k)
                if (j + k < V) f(j + k, __bfloat162float(h[k]));
        }
    }
}

template <int kVec>
__global__ void __launch_bounds__(kThreads)
    crossentropy_forward_kernel(float* losses, float* lse, const bf16* logits,
                                const uint32_t* targets, int V, int Vp) {
    __shared__ float scratch[kWarps];
    const size_t row = blockIdx.x;
    const bf16* z = logits + row * Vp;

    float mx = -INFINITY;
    for_each_logit<kVec>(z, V, [&](int, float x) { mx = fmaxf(mx, x); });
    mx = block_reduce(mx, scratch, Max{});

    float sum = 0.0f;
    for_each_logit<kVec>(z, V, [&](int, float x) { sum += expf(x - mx); });
    sum = block_reduce(sum, scratch, Sum{});

    if (threadIdx.x == 0) {
        const float l = mx + logf(sum);
        lse[row] = l;
        losses[row] = l - __bfloat162float(z[targets[row]]);
    }
}

// Each element is read and written by the same thread, in place.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    crossentropy_backward_kernel(bf16* logits, const float* lse, const uint32_t* targets,
                                 float dloss, int V, int Vp) {
    const size_t row = blockIdx.x;
    bf16* z = logits + row * Vp;
    const float l = lse[row];
    const int target = static_cast<int>(targets[row]);
    // Same rounding steps as the CPU: exp·dloss first, then the target's dloss taken off.
    auto grad = [&](int j, float x) {
        if (j >= V) return 0.0f;
        float g = expf(x - l) * dloss;
        if (j == target) g -= dloss;
        return g;
    };
    for (int j = static_cast<int>(threadIdx.x) * kVec; j < Vp; j += kThreads * kVec) {
        if constexpr (kVec == 1) {
            z[j] = __float2bfloat16(grad(j, __bfloat162float(z[j])));
        } else {
            static_assert(kVec == 8, "one 16-byte access");
            alignas(16) bf16 h[8];
            *reinterpret_cast<uint4*>(h) = *reinterpret_cast<const uint4*>(z + j);
#pragma unroll
            for (int k = 0; k < 8; ++k)
                h[k] = __float2bfloat16(grad(j + k, __bfloat162float(h[k])));
            *reinterpret_cast<uint4*>(z + j) = *reinterpret_cast<const uint4*>(h);
        }
    }
}

}  // namespace

void crossentropy_forward(float* losses, float* lse, const bf16* logits, const uint32_t* targets,
                          int N, int V, int Vp, cudaStream_t stream) {
    if (N <= 0 || Vp <= 0) return;
    if (Vp % 8 == 0 && aligned16(logits))
        trainrig::cuda::launch(crossentropy_forward_kernel<8>,
                               {static_cast<unsigned>(N), kThreads, 0, stream}, losses, lse, logits,
                               targets, V, Vp);
    else
        trainrig::cuda::launch(crossentropy_forward_kernel<1>,
                               {static_cast<unsigned>(N), kThreads, 0, stream}, losses, lse, logits,
                               targets, V, Vp);
}

void crossentropy_backward(bf16* logits, const float* lse, const uint32_t* targets, float dloss,
                           int N, int V, int Vp, cudaStream_t stream) {
    if (N <= 0 || Vp <= 0) return;
    if (Vp % 8 == 0 && aligned16(logits))
        trainrig::cuda::launch(crossentropy_backward_kernel<8>,
                               {static_cast<unsigned>(N), kThreads, 0, stream}, logits, lse,
                               targets, dloss, V, Vp);
    else
        trainrig::cuda::launch(crossentropy_backward_kernel<1>,
                               {static_cast<unsigned>(N), kThreads, 0, stream}, logits, lse,
                               targets, dloss, V, Vp);
}

}  // namespace trainrig::train::cuda

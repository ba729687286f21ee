// GPT-2's tanh GELU, elementwise on bf16 with fp32 arithmetic, and its derivative.
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/bf16_vector.cuh"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

using namespace vec::elementwise;

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCube = 0.044715f;

// Same operation order as the CPU reference (src/train/cpu/pointwise.cpp).
__device__ float gelu(float x) {
    return 0.5f * x * (1.0f + tanhf(kGeluScale * (x + kGeluCube * x * x * x)));
}

__device__ float gelu_grad(float x) {
    const float u = kGeluScale * (x + kGeluCube * x * x * x);
    const float th = tanhf(u);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCube * x * x);
    return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

// kVec = 8 (all pointers 16-byte aligned): the first n - n % 8 elements go as vectors and the
// first threads of the grid take the few left over.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    gelu_forward_kernel(bf16* out, const bf16* inp, size_t n) {
    const size_t tid = grid_thread();
    const size_t stride = grid_threads();
    const size_t nvec = n / kVec;
    for (size_t v = tid; v < nvec; v += stride) {
        float x[kVec];
        load(x, inp + v * kVec);
#pragma unroll
        for (int k = 0; k < kVec; ++k) x[k] = gelu(x[k]);
        store(out + v * kVec, x);
    }
    const size_t i = nvec * kVec + tid;
    if (kVec > 1 && i < n) out[i] = __float2bfloat16(gelu(__bfloat162float(inp[i])));
}

template <int kVec>
__global__ void __launch_bounds__(kThreads)
    gelu_backward_kernel(bf16* dinp, const bf16* inp, const bf16* dout, size_t n) {
    const size_t tid = grid_thread();
    const size_t stride = grid_threads();
    const size_t nvec = n / kVec;
    for (size_t v = tid; v < nvec; v += stride) {
        float x[kVec], d[kVec];
        load(x, inp + v * kVec);
        load(d, dout + v * kVec);
#pragma unroll
        for (int k = 0; k < kVec; ++k) x[k] = gelu_grad(x[k]) * d[k];
        store(dinp + v * kVec, x);
    }
    const size_t i = nvec * kVec + tid;
    if (kVec > 1 && i < n)
        dinp[i] = __float2bfloat16(gelu_grad(__bfloat162float(inp[i])) * __bfloat162float(dout[i]));
}

}  // namespace

void gelu_forward(bf16* out, const bf16* inp, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if (aligned16(out) && aligned16(inp))
        trainrig::cuda::launch(gelu_forward_kernel<8>, {blocks_for(n / 8), kThreads, 0, stream},
                               out, inp, n);
    else
        trainrig::cuda::launch(gelu_forward_kernel<1>, {blocks_for(n), kThreads, 0, stream}, out,
                               inp, n);
}

void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if (aligned16(dinp) && aligned16(inp) && aligned16(dout))
        trainrig::cuda::launch(gelu_backward_kernel<8>, {blocks_for(n / 8), kThreads, 0, stream},
                               dinp, inp, dout, n);
    else
        trainrig::cuda::launch(gelu_backward_kernel<1>, {blocks_for(n), kThreads, 0, stream}, dinp,
                               inp, dout, n);
}

}  // namespace trainrig::train::cuda

// SwiGLU (Shazeer 2020, arXiv:2002.05202), Llama's MLP activation, on bf16 with fp32 arithmetic:
// the first projection's row is [gate: F | up: F] and the activation silu(gate)·up, F wide.
// Backward writes the gradient of both halves. Same operation order as the CPU reference
// (src/train/cpu/pointwise.cpp).
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/bf16_vector.cuh"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

using namespace vec::elementwise;

// kVec consecutive channels of one row per step: kVec = 8 needs F % 8 == 0 (a vector never
// straddles the gate and up halves or two rows) and 16-byte aligned pointers.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    swiglu_forward_kernel(bf16* out, const bf16* fc, int F, size_t total) {
    const size_t stride = grid_threads() * kVec;
    for (size_t o = grid_thread() * kVec; o < total; o += stride) {
        const size_t n = o / static_cast<size_t>(F);
        const size_t i = o - n * static_cast<size_t>(F);
        const bf16* gate = fc + n * 2 * static_cast<size_t>(F) + i;
        float g[kVec], u[kVec];
        load(g, gate);
        load(u, gate + F);
#pragma unroll
        for (int k = 0; k < kVec; ++k) g[k] = g[k] / (1.0f + expf(-g[k])) * u[k];
        store(out + o, g);
    }
}

// silu(g) = g·σ(g), silu'(g) = σ(g)·(1 + g·(1 − σ(g))):
//   dgate = dout · up · silu'(gate),  dup = dout · silu(gate).
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    swiglu_backward_kernel(bf16* dfc, const bf16* fc, const bf16* dout, int F, size_t total) {
    const size_t stride = grid_threads() * kVec;
    for (size_t o = grid_thread() * kVec; o < total; o += stride) {
        const size_t n = o / static_cast<size_t>(F);
        const size_t at = n * 2 * static_cast<size_t>(F) + (o - n * static_cast<size_t>(F));
        float g[kVec], u[kVec], d[kVec];
        load(g, fc + at);
        load(u, fc + at + F);
        load(d, dout + o);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
            const float sig = 1.0f / (1.0f + expf(-g[k]));
            const float dgate = d[k] * u[k] * sig * (1.0f + g[k] * (1.0f - sig));
            u[k] = d[k] * g[k] * sig;  // dup
            g[k] = dgate;
        }
        store(dfc + at, g);
        store(dfc + at + F, u);
    }
}

}  // namespace

void swiglu_forward(bf16* out, const bf16* fc, size_t N, int F, cudaStream_t stream) {
    if (N == 0 || F <= 0) return;
    const size_t total = N * static_cast<size_t>(F);
    if (F % 8 == 0 && aligned16(out) && aligned16(fc))
        trainrig::cuda::launch(swiglu_forward_kernel<8>,
                               {blocks_for(total / 8), kThreads, 0, stream}, out, fc, F, total);
    else
        trainrig::cuda::launch(swiglu_forward_kernel<1>, {blocks_for(total), kThreads, 0, stream},
                               out, fc, F, total);
}

void swiglu_backward(bf16* dfc, const bf16* fc, const bf16* dout, size_t N, int F,
                     cudaStream_t stream) {
    if (N == 0 || F <= 0) return;
    const size_t total = N * static_cast<size_t>(F);
    if (F % 8 == 0 && aligned16(dfc) && aligned16(fc) && aligned16(dout))
        trainrig::cuda::launch(swiglu_backward_kernel<8>,
                               {blocks_for(total / 8), kThreads, 0, stream}, dfc, fc, dout, F,
                               total);
    else
        trainrig::cuda::launch(swiglu_backward_kernel<1>, {blocks_for(total), kThreads, 0, stream},
                               dfc, fc, dout, F, total);
}

}  // namespace trainrig::train::cuda

// LayerNorm over rows of C channels, forward and backward, one warp per row. Statistics and
// gradients in fp32; eps and the biased variance as the CPU reference
// (src/train/cpu/layernorm.cpp), with the same operation order.
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/bf16_vector.cuh"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

using namespace vec;  // bf16_vector.cuh: loads, stores, warp and row sums

constexpr float kEps = 1e-5f;
constexpr int kFwdWarps = 8;
// Backward: one warp per row, 16 warps × at most 264 blocks = 2 blocks on each of an
// H100/H200's 132 SMs, 32 warps per SM.
constexpr int kBwdWarps = 16;
constexpr unsigned kBwdMaxBlocks = 264;

// Three passes over the row (mean, variance around it, output), as the CPU does; the row is
// small enough that the second and third come from L1. kVec = 8 needs C % 8 == 0 and 16-byte
// aligned pointers so that every row starts on a vector boundary.
template <int kVec>
__global__ void __launch_bounds__(kFwdWarps * 32)
    layernorm_forward_kernel(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* w,
                             const bf16* b, int N, int C) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    const size_t row = grid_warp<kFwdWarps>();
    if (row >= static_cast<size_t>(N)) return;  // whole warp: the shuffles below stay full
    const bf16* x = inp + row * C;

    const float m = row_mean<kVec>(x, C, lane, [](float v) { return v; });
    const float var = row_mean<kVec>(x, C, lane, [m](float v) { return (v - m) * (v - m); });
    const float s = 1.0f / sqrtf(var + kEps);

    bf16* o = out + row * C;
    for (int c = lane * kVec; c < C; c += 32 * kVec) {
        float xv[kVec], wv[kVec], bv[kVec];
        load(xv, x + c);
        load(wv, w + c);
        load(bv, b + c);
#pragma unroll
        for (int k = 0; k < kVec; ++k) xv[k] = (xv[k] - m) * s * wv[k] + bv[k];
        store(o + c, xv);
    }
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

// The input gradient; warps stride over rows. dw and db are column sums, added in a fixed order
// by column_sums.cu.
__global__ void __launch_bounds__(kBwdWarps * 32)
    layernorm_backward_kernel(float* dinp, const bf16* dout, const bf16* inp, const bf16* w,
                              const float* mean, const float* rstd, int N, int C) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (size_t row = grid_warp<kBwdWarps>(); row < static_cast<size_t>(N);
         row += grid_warps<kBwdWarps>()) {
        const RowGrad g = row_grad(inp, dout, dinp, row, C);
        const float m = mean[row], s = rstd[row];

        float dnorm_sum = 0.0f, dnorm_norm_sum = 0.0f;
        for (int c = lane; c < C; c += 32) {
            const float xc = __bfloat162float(g.x[c]);
            const float dnorm = __bfloat162float(w[c]) * __bfloat162float(g.dy[c]);
            dnorm_sum += dnorm;
            dnorm_norm_sum += dnorm * (xc - m) * s;
        }
        const float dnorm_mean = warp_sum(dnorm_sum) / static_cast<float>(C);
        const float dnorm_norm_mean = warp_sum(dnorm_norm_sum) / static_cast<float>(C);

        for (int c = lane; c < C; c += 32) {
            const float xc = __bfloat162float(g.x[c]);
            const float dc = __bfloat162float(g.dy[c]);
            const float norm = (xc - m) * s;
            g.dx[c] += (__bfloat162float(w[c]) * dc - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
}

}  // namespace

void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* w,
                       const bf16* b, int N, int C, cudaStream_t stream) {
    if (N <= 0 || C <= 0) return;
    const unsigned blocks =
        static_cast<unsigned>((static_cast<size_t>(N) + kFwdWarps - 1) / kFwdWarps);
    if (C % 8 == 0 && aligned16(out) && aligned16(inp) && aligned16(w) && aligned16(b))
        trainrig::cuda::launch(layernorm_forward_kernel<8>, {blocks, kFwdWarps * 32, 0, stream},
                               out, mean, rstd, inp, w, b, N, C);
    else
        trainrig::cuda::launch(layernorm_forward_kernel<1>, {blocks, kFwdWarps * 32, 0, stream},
                               out, mean, rstd, inp, w, b, N, C);
}

void layernorm_backward(float* dinp, float* dw, float* db, const bf16* dout, const bf16* inp,
                        const bf16* w, const float* mean, const float* rstd, int N, int C,
                        float* scratch, cudaStream_t stream) {
    if (N <= 0 || C <= 0) return;
    const size_t needed = (static_cast<size_t>(N) + kBwdWarps - 1) / kBwdWarps;
    const unsigned blocks = needed < kBwdMaxBlocks ? static_cast<unsigned>(needed) : kBwdMaxBlocks;
    trainrig::cuda::launch(layernorm_backward_kernel, {blocks, kBwdWarps * 32, 0, stream}, dinp,
                           dout, inp, w, mean, rstd, N, C);
    layernorm_weight_backward(dw, db, dout, inp, mean, rstd, N, C, scratch, stream);
}

}  // namespace trainrig::train::cuda

// RMSNorm over rows of C channels (Zhang & Sennrich 2019; Llama's norm), forward and backward,
// one warp per row: y = x · rstd · w with rstd = 1/sqrt(mean(x²) + eps), a gain and no bias.
// Statistics and gradients in fp32, with the operation order of the CPU reference
// (src/train/cpu/rmsnorm.cpp); the structure is layernorm.cu's.
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/kernels/bf16_vector.cuh"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

using namespace vec;  // bf16_vector.cuh: loads, stores, warp and row sums

constexpr int kFwdWarps = 8;
// As layernorm.cu: 2 blocks of 16 warps on each of an H100/H200's 132 SMs.
constexpr int kBwdWarps = 16;
constexpr unsigned kBwdMaxBlocks = 264;

// Two passes over the row (mean square, output), as the CPU does. kVec = 8 needs C % 8 == 0
// and 16-byte aligned pointers so that every row starts on a vector boundary.
template <int kVec>
__global__ void __launch_bounds__(kFwdWarps * 32)
    rmsnorm_forward_kernel(bf16* out, float* rstd, const bf16* inp, const bf16* w, int N, int C,
                           float eps) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    const size_t row = grid_warp<kFwdWarps>();
    if (row >= static_cast<size_t>(N)) return;  // whole warp: the shuffles below stay full
    const bf16* x = inp + row * C;

    const float ms = row_mean<kVec>(x, C, lane, [](float v) { return v * v; });
    const float s = 1.0f / sqrtf(ms + eps);

    bf16* o = out + row * C;
    for (int c = lane * kVec; c < C; c += 32 * kVec) {
        float xv[kVec], wv[kVec];
        load(xv, x + c);
        load(wv, w + c);
#pragma unroll
        for (int k = 0; k < kVec; ++k) xv[k] = xv[k] * s * wv[k];
        store(o + c, xv);
    }
    if (lane == 0) rstd[row] = s;
}

// With y = x·s·w: dx = s·(w∘dy) − x·s³·mean(x∘w∘dy), dw = Σ_rows dy·x·s. Warps stride over
// rows for dx; dw is a column sum, added in a fixed order by column_sums.cu.
__global__ void __launch_bounds__(kBwdWarps * 32)
    rmsnorm_backward_kernel(float* dinp, const bf16* dout, const bf16* inp, const bf16* w,
                            const float* rstd, int N, int C) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (size_t row = grid_warp<kBwdWarps>(); row < static_cast<size_t>(N);
         row += grid_warps<kBwdWarps>()) {
        const RowGrad g = row_grad(inp, dout, dinp, row, C);
        const float s = rstd[row];

        float dot = 0.0f;
        for (int c = lane; c < C; c += 32)
            dot += __bfloat162float(g.x[c]) * __bfloat162float(w[c]) * __bfloat162float(g.dy[c]);
        const float k = warp_sum(dot) / static_cast<float>(C) * s * s * s;

        for (int c = lane; c < C; c += 32) {
            const float xc = __bfloat162float(g.x[c]);
            const float dc = __bfloat162float(g.dy[c]);
            g.dx[c] += __bfloat162float(w[c]) * dc * s - xc * k;
        }
    }
}

}  // namespace

void rmsnorm_forward(bf16* out, float* rstd, const bf16* inp, const bf16* w, int N, int C,
                     float eps, cudaStream_t stream) {
    if (N <= 0 || C <= 0) return;
    const unsigned blocks =
        static_cast<unsigned>((static_cast<size_t>(N) + kFwdWarps - 1) / kFwdWarps);
    if (C % 8 == 0 && aligned16(out) && aligned16(inp) && aligned16(w))
        trainrig::cuda::launch(rmsnorm_forward_kernel<8>, {blocks, kFwdWarps * 32, 0, stream}, out,
                               rstd, inp, w, N, C, eps);
    else
        trainrig::cuda::launch(rmsnorm_forward_kernel<1>, {blocks, kFwdWarps * 32, 0, stream}, out,
                               rstd, inp, w, N, C, eps);
}

void rmsnorm_backward(float* dinp, float* dw, const bf16* dout, const bf16* inp, const bf16* w,
                      const float* rstd, int N, int C, float* scratch, cudaStream_t stream) {
    if (N <= 0 || C <= 0) return;
    const size_t needed = (static_cast<size_t>(N) + kBwdWarps - 1) / kBwdWarps;
    const unsigned blocks = needed < kBwdMaxBlocks ? static_cast<unsigned>(needed) : kBwdMaxBlocks;
    trainrig::cuda::launch(rmsnorm_backward_kernel, {blocks, kBwdWarps * 32, 0, stream}, dinp, dout,
                           inp, w, rstd, N, C);
    rmsnorm_weight_backward(dw, dout, inp, rstd, N, C, scratch, stream);
}

}  // namespace trainrig::train::cuda

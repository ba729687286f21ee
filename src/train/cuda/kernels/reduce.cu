// Whole-buffer reductions and casts over the parameter-sized fp32 buffers: Σ x² for the
// gradient norm, and fp32 → bf16.
#include "cuda/launch.h"
#include "train/cuda/kernels/grid_stride.cuh"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Enough blocks to fill an H100/H200 several times over; the loop strides past it.
constexpr size_t kMaxBlocks = 4096;

// The grid is always kSumSquaresBlocks × kThreads and each thread's elements and the reduction
// tree are fixed, so a given n gives the same bits every time. Launched even for n == 0: every
// partial must be written, here with 0.
__global__ void __launch_bounds__(kThreads)
    sum_squares_kernel(double* partial, const float* x, size_t n) {
    __shared__ double warp_sums[kWarps];
    double s = 0.0;
    for (size_t i = grid_thread(); i < n; i += grid_threads()) {
        const double xi = x[i];
        s += xi * xi;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
        partial[blockIdx.x] = total;
    }
}

__global__ void __launch_bounds__(kThreads)
    cast_to_bf16_kernel(bf16* out, const float* inp, size_t n) {
    for (size_t i = grid_thread(); i < n; i += grid_threads()) out[i] = __float2bfloat16(inp[i]);
}

}  // namespace

void sum_squares(double* partial, const float* x, size_t n, cudaStream_t stream) {
    trainrig::cuda::launch(sum_squares_kernel, {kSumSquaresBlocks, kThreads, 0, stream}, partial, x,
                           n);
}

void cast_to_bf16(bf16* out, const float* inp, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    const size_t needed = (n + kThreads - 1) / kThreads;
    const unsigned blocks = static_cast<unsigned>(needed < kMaxBlocks ? needed : kMaxBlocks);
    trainrig::cuda::launch(cast_to_bf16_kernel, {blocks, kThreads, 0, stream}, out, inp, n);
}

}  // namespace trainrig::train::cuda

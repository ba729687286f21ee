// The bias gradient of a linear layer: column sums of a bf16 or fp32 (N, OC) gradient into fp32.
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

// A block is one warp wide across a tile of columns and kRows warps deep; each warp walks its
// own rows, so every load of a warp is one contiguous segment of a row.
constexpr int kRows = 8;
// At least this many rows per thread, so the per-block reduction and atomics stay small next to
// the loads; at most kMaxRowBlocks blocks down the rows (the rest is covered by striding).
constexpr int kMinRowsPerThread = 32;
constexpr size_t kMaxRowBlocks = 1024;

__device__ inline float as_float(bf16 x) { return __bfloat162float(x); }
__device__ inline float as_float(float x) { return x; }

// kVec = 2 reads bf16 pairs: needs OC even (a pair never straddles two rows) and dout 4-byte
// aligned.
template <class In, int kVec>
__global__ void __launch_bounds__(32 * kRows)
    bias_backward_kernel(float* dbias, const In* dout, int N, int OC) {
    __shared__ float partial[kRows][32 * kVec];
    const int col = (static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x)) * kVec;
    float sum[kVec] = {};
    if (col < OC) {
        for (size_t row = size_t{blockIdx.y} * kRows + threadIdx.y; row < static_cast<size_t>(N);
             row += size_t{gridDim.y} * kRows) {
            const In* p = dout + row * OC + col;
            if constexpr (kVec == 1) {
                sum[0] += as_float(*p);
            } else {
                static_assert(kVec == 2 && sizeof(In) == 2, "bf16 pairs");
                const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
                sum[0] += f.x;
                sum[1] += f.y;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) partial[threadIdx.y][threadIdx.x * kVec + k] = sum[k];
    __syncthreads();
    if (threadIdx.y == 0 && col < OC) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
            float s = 0.0f;
            for (int r = 0; r < kRows; ++r) s += partial[r][threadIdx.x * kVec + k];
            atomicAdd(dbias + col + k, s);
        }
    }
}

dim3 grid_for(int N, int OC, int cols_per_block) {
    const size_t row_blocks_needed =
        (static_cast<size_t>(N) + kRows * kMinRowsPerThread - 1) / (kRows * kMinRowsPerThread);
    return dim3(
        static_cast<unsigned>((static_cast<size_t>(OC) + cols_per_block - 1) / cols_per_block),
        static_cast<unsigned>(row_blocks_needed < kMaxRowBlocks ? row_blocks_needed
                                                                : kMaxRowBlocks));
}

}  // namespace

void bias_backward(float* dbias, const bf16* dout, int N, int OC, cudaStream_t stream) {
    if (N <= 0 || OC <= 0) return;
    const bool pairs = OC % 2 == 0 && reinterpret_cast<uintptr_t>(dout) % 4 == 0;
    const dim3 grid = grid_for(N, OC, 32 * (pairs ? 2 : 1)), block(32, kRows);
    if (pairs)
        trainrig::cuda::launch(bias_backward_kernel<bf16, 2>, {grid, block, 0, stream}, dbias, dout,
                               N, OC);
    else
        trainrig::cuda::launch(bias_backward_kernel<bf16, 1>, {grid, block, 0, stream}, dbias, dout,
                               N, OC);
}

void bias_backward(float* dbias, const float* dout, int N, int OC, cudaStream_t stream) {
    if (N <= 0 || OC <= 0) return;
    trainrig::cuda::launch(bias_backward_kernel<float, 1>,
                           {grid_for(N, OC, 32), dim3(32, kRows), 0, stream}, dbias, dout, N, OC);
}

}  // namespace trainrig::train::cuda

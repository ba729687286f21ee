#include <mma.h>

#include "cuda/launch.h"
#include "executor_kernels.h"

namespace trainrig::emu::testing {
namespace {

using trainrig::cuda::launch;
namespace wmma = nvcuda::wmma;

__global__ void block_reverse_kernel(const int* in, int* out, int n, BlockSync how) {
    TRAINRIG_DYNAMIC_SHARED(int, tile);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0;
    if (how == BlockSync::kSyncthreads) __syncthreads();
    if (how == BlockSync::kSyncwarp) __syncwarp();
    const int j = blockDim.x - 1 - threadIdx.x;
    if (i < n) out[i] = tile[j];
}

__global__ void warp_ops_kernel(const int* in, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = i < n ? in[i] : 0;
    int sum = v;
    for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    int prefix = v;
    for (int d = 1; d < 32; d *= 2) {
        const int up = __shfl_up_sync(0xffffffffu, prefix, d);
        if (static_cast<int>(threadIdx.x & 31) >= d) prefix += up;
    }
    const int first = __shfl_sync(0xffffffffu, v, 0);
    const unsigned odd = __ballot_sync(0xffffffffu, v & 1);
    if (i < n) {
        out[4 * i] = sum;
        out[4 * i + 1] = prefix;
        out[4 * i + 2] = first;
        out[4 * i + 3] = static_cast<int>(odd);
    }
}

template <class LA, class LB>
__global__ void wmma_kernel(const __nv_bfloat16* a, int lda, const __nv_bfloat16* b, int ldb,
                            float* c, int ldc) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, LA> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, LB> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, c, ldc, wmma::mem_row_major);
    wmma::load_matrix_sync(fa, a, lda);
    wmma::load_matrix_sync(fb, b, ldb);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, ldc, wmma::mem_row_major);
}

__global__ void divergent_barrier_kernel(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
        out[threadIdx.x] = 1;
    } else {
        __syncthreads();
        out[threadIdx.x] = 2;
    }
}

__global__ void exited_lane_kernel(int* out) {
    if (threadIdx.x == 0) return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}

__global__ void atomic_sum_kernel(const float* x, float* sum) {
    atomicAdd(sum, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

__global__ void index_map_kernel(unsigned* out) {
    const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    out[block * per_block + thread] = blockIdx.x | blockIdx.y << 4 | blockIdx.z << 8 |
                                      threadIdx.x << 12 | threadIdx.y << 18 | threadIdx.z << 24;
}

__global__ void dynamic_shared_kernel(int* out) {
    TRAINRIG_DYNAMIC_SHARED(int, words);
    words[threadIdx.x] = static_cast<int>(threadIdx.x) * 7;
    __syncthreads();
    out[threadIdx.x] = words[(threadIdx.x + 1) % blockDim.x];
}

__global__ void busy_kernel(int* out, int rounds) {
    int v = 0;
    for (int r = 0; r < rounds; ++r) v = v * 31 + r;
    if (threadIdx.x == 0) out[0] = v;
}

}  // namespace

void block_reverse(const int* in, int* out, int n, BlockSync how, cudaStream_t s) {
    const int threads = 64;
    launch(block_reverse_kernel,
           {static_cast<unsigned>((n + threads - 1) / threads), threads, threads * sizeof(int), s},
           in, out, n, how);
}

void block_reverse(const int* in, int* out, int n, bool sync, cudaStream_t s) {
    block_reverse(in, out, n, sync ? BlockSync::kSyncthreads : BlockSync::kNone, s);
}

void warp_ops(const int* in, int* out, int n, cudaStream_t s) {
    launch(warp_ops_kernel, {static_cast<unsigned>((n + 63) / 64), 64, 0, s}, in, out, n);
}

void wmma_tile(const __nv_bfloat16* a, int lda, bool a_col, const __nv_bfloat16* b, int ldb,
               bool b_col, float* c, int ldc, cudaStream_t s) {
    const trainrig::cuda::LaunchConfig one_warp{1, 32, 0, s};
    if (!a_col && !b_col)
        launch(wmma_kernel<wmma::row_major, wmma::row_major>, one_warp, a, lda, b, ldb, c, ldc);
    if (!a_col && b_col)
        launch(wmma_kernel<wmma::row_major, wmma::col_major>, one_warp, a, lda, b, ldb, c, ldc);
    if (a_col && !b_col)
        launch(wmma_kernel<wmma::col_major, wmma::row_major>, one_warp, a, lda, b, ldb, c, ldc);
    if (a_col && b_col)
        launch(wmma_kernel<wmma::col_major, wmma::col_major>, one_warp, a, lda, b, ldb, c, ldc);
}

void divergent_barrier(int* out, cudaStream_t s) {
    launch(divergent_barrier_kernel, {1, 32, 0, s}, out);
}

void exited_lane_shuffle(int* out, cudaStream_t s) {
    launch(exited_lane_kernel, {1, 32, 0, s}, out);
}

void atomic_sum(const float* x, float* sum, int blocks, cudaStream_t s) {
    launch(atomic_sum_kernel, {static_cast<unsigned>(blocks), 64, 0, s}, x, sum);
}

void index_map(unsigned* out, dim3 grid, dim3 block, cudaStream_t s) {
    launch(index_map_kernel, {grid, block, 0, s}, out);
}

void dynamic_shared_roundtrip(int* out, int threads, size_t bytes, cudaStream_t s) {
    launch(dynamic_shared_kernel, {1, static_cast<unsigned>(threads), bytes, s}, out);
}

cudaError_t set_dynamic_shared_attribute(int bytes) {
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(dynamic_shared_kernel),
                                cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

void busy(int* out, int rounds, cudaStream_t s) { launch(busy_kernel, {1, 32, 0, s}, out, rounds); }

}  // namespace trainrig::emu::testing

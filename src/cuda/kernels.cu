// Fill and compare kernels of the GPU benchmarks. Grid-stride loops (any n with a bounded
// grid); counts are reduced per block in shared memory, then one atomic per block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "cuda/launch.h"
#include "cuda/pattern.h"

namespace trainrig::cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks to fill any current GPU (132 SMs on H100/H200, 8 blocks each), no more.
unsigned grid_for(size_t n) {
    const size_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}

__device__ void add_block_count(unsigned long long mine, unsigned long long* count) {
    __shared__ unsigned long long block_sum;
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    if (mine != 0) atomicAdd(&block_sum, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_sum != 0) atomicAdd(count, block_sum);
}

__global__ void fill_pattern_kernel(uint32_t* words, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        words[i] = pattern_word(i, seed);
}

__global__ void pattern_mismatch_kernel(const uint32_t* words, size_t n, uint32_t seed,
                                        unsigned long long* count) {
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        mine += words[i] != pattern_word(i, seed);
    add_block_count(mine, count);
}

__global__ void word_mismatch_kernel(const uint32_t* a, const uint32_t* b, size_t n,
                                     unsigned long long* count) {
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        mine += a[i] != b[i];
    add_block_count(mine, count);
}

template <class T>
__device__ T from_float(float v);
template <>
__device__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
}
template <>
__device__ __half from_float(float v) {
    return __float2half_rn(v);
}
template <>
__device__ float from_float(float v) {
    return v;
}
template <>
__device__ __nv_fp8_e4m3 from_float(float v) {
    return __nv_fp8_e4m3(v);  // round to nearest, saturating
}

template <class T>
__global__ void fill_uniform_kernel(T* data, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        data[i] = from_float<T>(pattern_uniform(i, seed));
}

template <class T>
__global__ void widen_kernel(const T* data, size_t n, float* out) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        out[i] = static_cast<float>(data[i]);
}

__global__ void fill_collective_kernel(float* send, size_t n, int rank) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        send[i] = bench::collective_input(rank, i);
}

__global__ void collective_mismatch_kernel(const float* recv, size_t n, bench::Collective c,
                                           int nranks, int rank, size_t block,
                                           unsigned long long* count) {
    unsigned long long mine = 0;
    for (size_t j = blockIdx.x * size_t{blockDim.x} + threadIdx.x; j < n;
         j += size_t{gridDim.x} * blockDim.x)
        mine += recv[j] != bench::collective_expected(c, nranks, rank, block, j);
    add_block_count(mine, count);
}

Status launched() {
    CUDA_TRY(cudaGetLastError());
    return {};
}

}  // namespace

Status fill_pattern(uint32_t* words, size_t n, uint32_t seed, cudaStream_t stream) {
    launch(fill_pattern_kernel, {grid_for(n), kThreads, 0, stream}, words, n, seed);
    return launched();
}

Status count_pattern_mismatches(const uint32_t* words, size_t n, uint32_t seed,
                                unsigned long long* count, cudaStream_t stream) {
    launch(pattern_mismatch_kernel, {grid_for(n), kThreads, 0, stream}, words, n, seed, count);
    return launched();
}

Status count_word_mismatches(const uint32_t* a, const uint32_t* b, size_t n,
                             unsigned long long* count, cudaStream_t stream) {
    launch(word_mismatch_kernel, {grid_for(n), kThreads, 0, stream}, a, b, n, count);
    return launched();
}

Status fill_uniform(void* data, bench::GemmDtype d, size_t n, uint32_t seed, cudaStream_t stream) {
    const unsigned g = grid_for(n);
    switch (d) {
        case bench::GemmDtype::kBf16:
            launch(fill_uniform_kernel<__nv_bfloat16>, {g, kThreads, 0, stream},
                   static_cast<__nv_bfloat16*>(data), n, seed);
            break;
        case bench::GemmDtype::kFp16:
            launch(fill_uniform_kernel<__half>, {g, kThreads, 0, stream},
                   static_cast<__half*>(data), n, seed);
            break;
        case bench::GemmDtype::kTf32:
            launch(fill_uniform_kernel<float>, {g, kThreads, 0, stream}, static_cast<float*>(data),
                   n, seed);
            break;
        case bench::GemmDtype::kFp8E4m3:
            launch(fill_uniform_kernel<__nv_fp8_e4m3>, {g, kThreads, 0, stream},
                   static_cast<__nv_fp8_e4m3*>(data), n, seed);
            break;
    }
    return launched();
}

Status widen_to_float(const void* data, bench::GemmDtype d, bool input, size_t n, float* out,
                      cudaStream_t stream) {
    const unsigned g = grid_for(n);
    // Outputs: fp8 matmuls write bf16 (gemm_types.h); the others write their input type.
    const bench::GemmDtype t =
        !input && d == bench::GemmDtype::kFp8E4m3 ? bench::GemmDtype::kBf16 : d;
    switch (t) {
        case bench::GemmDtype::kBf16:
            launch(widen_kernel<__nv_bfloat16>, {g, kThreads, 0, stream},
                   static_cast<const __nv_bfloat16*>(data), n, out);
            break;
        case bench::GemmDtype::kFp16:
            launch(widen_kernel<__half>, {g, kThreads, 0, stream}, static_cast<const __half*>(data),
                   n, out);
            break;
        case bench::GemmDtype::kTf32:
            launch(widen_kernel<float>, {g, kThreads, 0, stream}, static_cast<const float*>(data),
                   n, out);
            break;
        case bench::GemmDtype::kFp8E4m3:
            launch(widen_kernel<__nv_fp8_e4m3>, {g, kThreads, 0, stream},
                   static_cast<const __nv_fp8_e4m3*>(data), n, out);
            break;
    }
    return launched();
}

Status fill_collective_input(float* send, size_t n, int rank, cudaStream_t stream) {
    launch(fill_collective_kernel, {grid_for(n), kThreads, 0, stream}, send, n, rank);
    return launched();
}

Status count_collective_mismatches(const float* recv, size_t n, bench::Collective c, int nranks,
                                   int rank, size_t block, unsigned long long* count,
                                   cudaStream_t stream) {
    launch(collective_mismatch_kernel, {grid_for(n), kThreads, 0, stream}, recv, n, c, nranks, rank,
           block, count);
    return launched();
}

}  // namespace trainrig::cuda

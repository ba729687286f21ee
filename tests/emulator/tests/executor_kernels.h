// Small kernels that exercise one feature of the emulated device each, launched through
// src/cuda/launch.h as product code launches them (executor_kernels.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace trainrig::emu::testing {

// How block_reverse's threads wait between writing shared memory and reading another's value.
enum class BlockSync { kNone, kSyncthreads, kSyncwarp };
// out[i] = in[n - 1 - i] within each block of 64, through shared memory; with `sync` false the
// __syncthreads between the write and the read is left out.
void block_reverse(const int* in, int* out, int n, bool sync, cudaStream_t s = nullptr);
// The same with `how` between the write and the read: __syncwarp orders a warp's own lanes
// only, and the value read comes from the other warp.
void block_reverse(const int* in, int* out, int n, BlockSync how, cudaStream_t s = nullptr);
// Per warp of 32 values: the sum through __shfl_xor_sync, the prefix through __shfl_up_sync,
// lane 0's value through __shfl_sync, and the ballot of odd values, into 4 outputs per lane.
void warp_ops(const int* in, int* out, int n, cudaStream_t s = nullptr);
// c (16×16, fp32, row-major, ldc) = a (16×16 bf16, lda) · b (16×16 bf16, ldb) + c, one warp;
// a_col/b_col: the operands are stored column-major.
void wmma_tile(const __nv_bfloat16* a, int lda, bool a_col, const __nv_bfloat16* b, int ldb,
               bool b_col, float* c, int ldc, cudaStream_t s = nullptr);
// Threads 0..15 reach one __syncthreads, the others another.
void divergent_barrier(int* out, cudaStream_t s = nullptr);
// Lane 0 returns before a full-mask shuffle.
void exited_lane_shuffle(int* out, cudaStream_t s = nullptr);
// *sum += x[i] for every i, with float atomics, `blocks` blocks of 64.
void atomic_sum(const float* x, float* sum, int blocks, cudaStream_t s = nullptr);
// out[linear] = (blockIdx, threadIdx) packed, for a 3-D grid of 3-D blocks.
void index_map(unsigned* out, dim3 grid, dim3 block, cudaStream_t s = nullptr);
// Dynamic shared memory of `bytes`, each thread writing its id at 4·tid and reading it back.
void dynamic_shared_roundtrip(int* out, int threads, size_t bytes, cudaStream_t s = nullptr);
// A kernel that spins `rounds` times per thread, to keep a stream busy.
void busy(int* out, int rounds, cudaStream_t s = nullptr);

}  // namespace trainrig::emu::testing

namespace trainrig::emu::testing {
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for dynamic_shared_roundtrip's kernel.
cudaError_t set_dynamic_shared_attribute(int bytes);
}  // namespace trainrig::emu::testing

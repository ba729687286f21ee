// A grid-stride loop's two numbers: this thread's index in the grid, and how many threads the
// grid has (the step from one of a thread's items to its next); and the same for warps. A loop over
// n items is `for (size_t i = grid_thread(); i < n; i += grid_threads())`; over kVec-wide vectors
// both are multiplied by kVec.
#pragma once
#include <cstddef>

namespace trainrig::train::cuda {

__device__ inline size_t grid_thread() { return blockIdx.x * size_t{blockDim.x} + threadIdx.x; }

__device__ inline size_t grid_threads() { return size_t{gridDim.x} * blockDim.x; }

// The same by warps, for kernels that give each row a warp and blocks of kWarps warps: this
// warp's first row, and the step to its next.
template <int kWarps>
__device__ inline size_t grid_warp() {
    return size_t{blockIdx.x} * kWarps + threadIdx.x / 32;
}
template <int kWarps>
__device__ inline size_t grid_warps() {
    return size_t{gridDim.x} * kWarps;
}

}  // namespace trainrig::train::cuda

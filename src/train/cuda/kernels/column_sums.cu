// Column sums of the backward pass: the bias gradients (Σ_rows dout) and the normalisation
// layers' weight gradients (Σ_rows dout·x̂), in one fixed order. Float atomics would add the
// rows in whatever order the blocks happen to finish, so two runs of the same step, or a run and
// its resume from a checkpoint, would differ in the last bits. Here each thread adds its rows in
// row order, a block adds its threads' sums in thread order into its own row of the scratch,
// and a second kernel adds those rows in block order: the same input gives the same bits.
#include <cstdint>

#include "cuda/launch.h"
#include "train/cuda/train_kernels.h"

namespace trainrig::train::cuda {
namespace {

// A block is one warp wide across 32 columns and kRows warps deep; each warp walks its own rows,
// so every load of a warp is one contiguous segment of a row.
constexpr int kRows = 8;
// At least this many rows per thread, so the scratch and the second pass stay small next to
// the loads; at most kMaxRowBlocks blocks down the rows (the rest is covered by striding).
constexpr size_t kMinRowsPerThread = 32;
constexpr size_t kMaxRowBlocks = 128;
constexpr int kAddThreads = 256;

__device__ inline float as_float(bf16 x) { return __bfloat162float(x); }
__device__ inline float as_float(float x) { return x; }

// What a row adds to a column: dout itself (a bias), or dout·x̂ (a norm's weight).
template <class In>
struct Plain {
    const In* dout;
    __device__ float operator()(size_t row, int col, int C) const {
        return as_float(dout[row * static_cast<size_t>(C) + static_cast<size_t>(col)]);
    }
};
struct LayerNormWeight {
    const bf16* dout;
    const bf16* inp;
    const float* mean;
    const float* rstd;
    __device__ float operator()(size_t row, int col, int C) const {
        const size_t i = row * static_cast<size_t>(C) + static_cast<size_t>(col);
        return as_float(dout[i]) * (as_float(inp[i]) - mean[row]) * rstd[row];
    }
};
struct RmsNormWeight {
    const bf16* dout;
    const bf16* inp;
    const float* rstd;
    __device__ float operator()(size_t row, int col, int C) const {
        const size_t i = row * static_cast<size_t>(C) + static_cast<size_t>(col);
        return as_float(dout[i]) * as_float(inp[i]) * rstd[row];
    }
};

size_t row_blocks(size_t N) {
    const size_t needed = (N + kRows * kMinRowsPerThread - 1) / (kRows * kMinRowsPerThread);
    return needed < 1 ? 1 : needed < kMaxRowBlocks ? needed : kMaxRowBlocks;
}

// partials[blockIdx.y][col] = the block's rows' sum for col.
template <class Term>
__global__ void __launch_bounds__(32 * kRows)
    column_partials_kernel(float* partials, Term term, int N, int C) {
    __shared__ float part[kRows][32];
    const int col = static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x);
    float sum = 0.0f;
    if (col < C)
        for (size_t row = size_t{blockIdx.y} * kRows + threadIdx.y; row < static_cast<size_t>(N);
             row += size_t{gridDim.y} * kRows)
            sum += term(row, col, C);
    part[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && col < C) {
        float s = 0.0f;
        for (int r = 0; r < kRows; ++r) s += part[r][threadIdx.x];
        partials[size_t{blockIdx.y} * static_cast<size_t>(C) + static_cast<size_t>(col)] = s;
    }
}

// out[col] += Σ_b partials[b][col], b in order.
__global__ void __launch_bounds__(kAddThreads)
    add_partials_kernel(float* out, const float* partials, int blocks, int C) {
    const int col = static_cast<int>(blockIdx.x) * kAddThreads + static_cast<int>(threadIdx.x);
    if (col >= C) return;
    float s = 0.0f;
    for (int b = 0; b < blocks; ++b)
        s += partials[static_cast<size_t>(b) * static_cast<size_t>(C) + static_cast<size_t>(col)];
    out[col] += s;
}

template <class Term>
void column_sums(float* out, Term term, int N, int C, float* scratch, cudaStream_t stream) {
    if (N <= 0 || C <= 0) return;
    const auto blocks = static_cast<unsigned>(row_blocks(static_cast<size_t>(N)));
    const auto col_tiles = static_cast<unsigned>((C + 31) / 32);
    trainrig::cuda::launch(column_partials_kernel<Term>,
                           {dim3(col_tiles, blocks), dim3(32, kRows), 0, stream}, scratch, term, N,
                           C);
    trainrig::cuda::launch(
        add_partials_kernel,
        {static_cast<unsigned>((C + kAddThreads - 1) / kAddThreads), kAddThreads, 0, stream}, out,
        static_cast<const float*>(scratch), static_cast<int>(blocks), C);
}

}  // namespace

size_t column_sums_scratch_floats(size_t N, int C) {
    return row_blocks(N) * static_cast<size_t>(C > 0 ? C : 0);
}

void bias_backward(float* dbias, const bf16* dout, int N, int OC, float* scratch,
                   cudaStream_t stream) {
    column_sums(dbias, Plain<bf16>{dout}, N, OC, scratch, stream);
}

void bias_backward(float* dbias, const float* dout, int N, int OC, float* scratch,
                   cudaStream_t stream) {
    column_sums(dbias, Plain<float>{dout}, N, OC, scratch, stream);
}

void layernorm_weight_backward(float* dw, float* db, const bf16* dout, const bf16* inp,
                               const float* mean, const float* rstd, int N, int C, float* scratch,
                               cudaStream_t stream) {
    column_sums(dw, LayerNormWeight{dout, inp, mean, rstd}, N, C, scratch, stream);
    column_sums(db, Plain<bf16>{dout}, N, C, scratch, stream);
}

void rmsnorm_weight_backward(float* dw, const bf16* dout, const bf16* inp, const float* rstd, int N,
                             int C, float* scratch, cudaStream_t stream) {
    column_sums(dw, RmsNormWeight{dout, inp, rstd}, N, C, scratch, stream);
}

}  // namespace trainrig::train::cuda

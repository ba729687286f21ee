#include <algorithm>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {
namespace {

// Rows of the input handled together: each weight row is loaded once for kRowBlock rows (the
// classifier's weight is Vp x C, 12.9 MB for GPT-2: streaming it once per row would make both
// passes memory-bound). Output columns handled together in the weight gradient: each input row
// is loaded once for kColBlock updates.
constexpr size_t kRowBlock = 4;
constexpr int kColBlock = 8;

template <class T>
[[gnu::always_inline]] inline void forward_rows(T* o, const T* x, const T* w, const T* bias,
                                                size_t rows, int C, int OC) {
    if (rows == kRowBlock) {
        for (int j = 0; j < OC; ++j) {
            const T* wr = w + static_cast<size_t>(j) * C;
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
            for (int c = 0; c < C; ++c) {
                s0 += x[c] * wr[c];
                s1 += x[C + c] * wr[c];
                s2 += x[2 * C + c] * wr[c];
                s3 += x[3 * C + c] * wr[c];
            }
            const T b = bias ? bias[j] : T(0);
            o[j] = s0 + b;
            o[OC + j] = s1 + b;
            o[2 * OC + j] = s2 + b;
            o[3 * OC + j] = s3 + b;
        }
        return;
    }
    for (size_t r = 0; r < rows; ++r) {
        for (int j = 0; j < OC; ++j) {
            const T* wr = w + static_cast<size_t>(j) * C;
            const T* xr = x + r * C;
            T s = 0;
#pragma omp simd reduction(+ : s)
            for (int c = 0; c < C; ++c) s += xr[c] * wr[c];
            o[r * OC + j] = s + (bias ? bias[j] : T(0));
        }
    }
}

// di (rows, C) += d (rows, OC) · w (OC, C)
template <class T>
[[gnu::always_inline]] inline void backward_input_rows(T* di, const T* d, const T* w, size_t rows,
                                                       int C, int OC) {
    for (int j = 0; j < OC; ++j) {
        const T* wr = w + static_cast<size_t>(j) * C;
        for (size_t r = 0; r < rows; ++r) {
            const T g = d[r * OC + j];
            T* dr = di + r * C;
#pragma omp simd
            for (int c = 0; c < C; ++c) dr[c] += g * wr[c];
        }
    }
}

// dw rows [j0, j1) += doutᵀ · inp over all N rows; dbias likewise.
template <class T>
[[gnu::always_inline]] inline void backward_weight_cols(T* dw, T* dbias, const T* dout,
                                                        const T* inp, size_t N, int C, int OC,
                                                        int j0, int j1) {
    for (size_t n = 0; n < N; ++n) {
        const T* x = inp + n * C;
        const T* d = dout + n * OC;
        for (int j = j0; j < j1; ++j) {
            const T g = d[j];
            T* dwr = dw + static_cast<size_t>(j) * C;
#pragma omp simd
            for (int c = 0; c < C; ++c) dwr[c] += g * x[c];
        }
    }
    if (dbias) {
        for (int j = j0; j < j1; ++j) {
            T s = 0;
            for (size_t n = 0; n < N; ++n) s += dout[n * OC + j];
            dbias[j] += s;
        }
    }
}

// The float kernels are compiled for AVX-512 (with FMA), AVX2 and baseline x86-64; the loader
// picks the widest the CPU has, once (GCC function multi-versioning). By single features, not
// x86-64-v3/v4 levels: hypervisors often hide one flag of a level (LZCNT here), which would
// drop a capable CPU to the baseline. Each clone is deterministic; a result may differ in the
// last bits between CPUs of different generations. OpenMP's outlined loop bodies do not
// inherit a clone's target, which is why the clones sit inside the loops.
#if defined(__x86_64__) && defined(__GNUC__)
#define TRAINRIG_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TRAINRIG_ISA_CLONES
#endif

TRAINRIG_ISA_CLONES void forward_rows_f32(float* o, const float* x, const float* w,
                                          const float* bias, size_t rows, int C, int OC) {
    forward_rows(o, x, w, bias, rows, C, OC);
}
TRAINRIG_ISA_CLONES void backward_input_rows_f32(float* di, const float* d, const float* w,
                                                 size_t rows, int C, int OC) {
    backward_input_rows(di, d, w, rows, C, OC);
}
TRAINRIG_ISA_CLONES void backward_weight_cols_f32(float* dw, float* dbias, const float* dout,
                                                  const float* inp, size_t N, int C, int OC, int j0,
                                                  int j1) {
    backward_weight_cols(dw, dbias, dout, inp, N, C, OC, j0, j1);
}

void forward_block(float* o, const float* x, const float* w, const float* b, size_t rows, int C,
                   int OC) {
    forward_rows_f32(o, x, w, b, rows, C, OC);
}
void forward_block(double* o, const double* x, const double* w, const double* b, size_t rows, int C,
                   int OC) {
    forward_rows(o, x, w, b, rows, C, OC);
}
void input_block(float* di, const float* d, const float* w, size_t rows, int C, int OC) {
    backward_input_rows_f32(di, d, w, rows, C, OC);
}
void input_block(double* di, const double* d, const double* w, size_t rows, int C, int OC) {
    backward_input_rows(di, d, w, rows, C, OC);
}
void weight_block(float* dw, float* db, const float* dout, const float* inp, size_t N, int C,
                  int OC, int j0, int j1) {
    backward_weight_cols_f32(dw, db, dout, inp, N, C, OC, j0, j1);
}
void weight_block(double* dw, double* db, const double* dout, const double* inp, size_t N, int C,
                  int OC, int j0, int j1) {
    backward_weight_cols(dw, db, dout, inp, N, C, OC, j0, j1);
}

}  // namespace

template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, size_t N, int C, int OC) {
    const long blocks = static_cast<long>((N + kRowBlock - 1) / kRowBlock);
#pragma omp parallel for schedule(static) if (parallel_worth(N * C * OC))
    for (long blk = 0; blk < blocks; ++blk) {
        const size_t n0 = static_cast<size_t>(blk) * kRowBlock;
        forward_block(out + n0 * OC, inp + n0 * C, w, bias, std::min(kRowBlock, N - n0), C, OC);
    }
}

template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, size_t N,
                     int C, int OC) {
    // dinp (N, C) += dout (N, OC) · w (OC, C): one thread per block of input rows.
    const long row_blocks = static_cast<long>((N + kRowBlock - 1) / kRowBlock);
#pragma omp parallel for schedule(static) if (parallel_worth(N * C * OC))
    for (long blk = 0; blk < row_blocks; ++blk) {
        const size_t n0 = static_cast<size_t>(blk) * kRowBlock;
        input_block(dinp + n0 * C, dout + n0 * OC, w, std::min(kRowBlock, N - n0), C, OC);
    }
    // dw (OC, C) += doutᵀ · inp and dbias += Σ dout: one thread per block of output columns.
    const int col_blocks = (OC + kColBlock - 1) / kColBlock;
#pragma omp parallel for schedule(static) if (parallel_worth(N * C * OC))
    for (int blk = 0; blk < col_blocks; ++blk) {
        const int j0 = blk * kColBlock;
        weight_block(dw, dbias, dout, inp, N, C, OC, j0, std::min(OC, j0 + kColBlock));
    }
}

template void matmul_forward(float*, const float*, const float*, const float*, size_t, int, int);
template void matmul_forward(double*, const double*, const double*, const double*, size_t, int,
                             int);
template void matmul_backward(float*, float*, float*, const float*, const float*, const float*,
                              size_t, int, int);
template void matmul_backward(double*, double*, double*, const double*, const double*,
                              const double*, size_t, int, int);

}  // namespace trainrig::train::cpu

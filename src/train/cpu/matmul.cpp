#include <algorithm>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {
namespace {

// Rows of the input handled together in the forward pass: each weight row is loaded once for
// kRowBlock dot products. Output columns handled together in the weight gradient: each input
// row is loaded once for kColBlock updates.
constexpr size_t kRowBlock = 4;
constexpr int kColBlock = 8;

template <class T>
T dot(const T* a, const T* b, int n) {
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, size_t N, int C, int OC) {
    const long blocks = static_cast<long>((N + kRowBlock - 1) / kRowBlock);
#pragma omp parallel for schedule(static)
    for (long blk = 0; blk < blocks; ++blk) {
        const size_t n0 = static_cast<size_t>(blk) * kRowBlock;
        const size_t rows = std::min(kRowBlock, N - n0);
        const T* x = inp + n0 * C;
        T* o = out + n0 * OC;
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
        } else {
            for (size_t r = 0; r < rows; ++r)
                for (int j = 0; j < OC; ++j)
                    o[r * OC + j] =
                        dot(x + r * C, w + static_cast<size_t>(j) * C, C) + (bias ? bias[j] : T(0));
        }
    }
}

template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, size_t N,
                     int C, int OC) {
    // dinp (N, C) += dout (N, OC) · w (OC, C): one thread per input row.
#pragma omp parallel for schedule(static)
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* d = dout + static_cast<size_t>(n) * OC;
        T* di = dinp + static_cast<size_t>(n) * C;
        for (int j = 0; j < OC; ++j) {
            const T g = d[j];
            const T* wr = w + static_cast<size_t>(j) * C;
#pragma omp simd
            for (int c = 0; c < C; ++c) di[c] += g * wr[c];
        }
    }
    // dw (OC, C) += doutᵀ · inp and dbias += Σ dout: one thread per block of output columns.
    const int blocks = (OC + kColBlock - 1) / kColBlock;
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < blocks; ++blk) {
        const int j0 = blk * kColBlock, j1 = std::min(OC, j0 + kColBlock);
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
}

template void matmul_forward(float*, const float*, const float*, const float*, size_t, int, int);
template void matmul_forward(double*, const double*, const double*, const double*, size_t, int,
                             int);
template void matmul_backward(float*, float*, float*, const float*, const float*, const float*,
                              size_t, int, int);
template void matmul_backward(double*, double*, double*, const double*, const double*,
                              const double*, size_t, int, int);

}  // namespace trainrig::train::cpu

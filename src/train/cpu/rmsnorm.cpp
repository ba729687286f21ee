#include <cmath>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {

template <class T>
void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* w, size_t N, int C, double eps) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* x = inp + static_cast<size_t>(n) * C;
        T* o = out + static_cast<size_t>(n) * C;
        T ms = 0;
#pragma omp simd reduction(+ : ms)
        for (int c = 0; c < C; ++c) ms += x[c] * x[c];
        ms /= static_cast<T>(C);
        const T s = T(1) / std::sqrt(ms + static_cast<T>(eps));
        for (int c = 0; c < C; ++c) o[c] = x[c] * s * w[c];
        rstd[n] = s;
    }
}

// With y = x·s·w and s = (mean(x²) + eps)^-½:  dx = s·(w∘dy) − x·s³·mean(x ∘ w ∘ dy).
template <class T>
void rmsnorm_backward(T* dinp, T* dw, const T* dout, const T* inp, const T* w, const T* rstd,
                      size_t N, int C) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* x = inp + static_cast<size_t>(n) * C;
        const T* d = dout + static_cast<size_t>(n) * C;
        T* di = dinp + static_cast<size_t>(n) * C;
        const T s = rstd[n];
        T dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int c = 0; c < C; ++c) dot += x[c] * w[c] * d[c];
        const T k = dot / static_cast<T>(C) * s * s * s;
        for (int c = 0; c < C; ++c) di[c] += w[c] * d[c] * s - x[c] * k;
    }
    // The gain's gradient sums over rows: each thread owns a range of channels.
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (int c = 0; c < C; ++c) {
        T gw = 0;
        for (size_t n = 0; n < N; ++n) gw += dout[n * C + c] * inp[n * C + c] * rstd[n];
        dw[c] += gw;
    }
}

template void rmsnorm_forward(float*, float*, const float*, const float*, size_t, int, double);
template void rmsnorm_forward(double*, double*, const double*, const double*, size_t, int, double);
template void rmsnorm_backward(float*, float*, const float*, const float*, const float*,
                               const float*, size_t, int);
template void rmsnorm_backward(double*, double*, const double*, const double*, const double*,
                               const double*, size_t, int);

}  // namespace trainrig::train::cpu

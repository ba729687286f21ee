#include <cmath>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, size_t N,
                       int C) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* x = inp + static_cast<size_t>(n) * C;
        T* o = out + static_cast<size_t>(n) * C;
        T m = 0;
#pragma omp simd reduction(+ : m)
        for (int c = 0; c < C; ++c) m += x[c];
        m /= static_cast<T>(C);
        T v = 0;
#pragma omp simd reduction(+ : v)
        for (int c = 0; c < C; ++c) v += (x[c] - m) * (x[c] - m);
        v /= static_cast<T>(C);
        const T s = T(1) / std::sqrt(v + static_cast<T>(kLayerNormEps));
        for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * w[c] + b[c];
        mean[n] = m;
        rstd[n] = s;
    }
}

template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                        const T* mean, const T* rstd, size_t N, int C) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* x = inp + static_cast<size_t>(n) * C;
        const T* d = dout + static_cast<size_t>(n) * C;
        T* di = dinp + static_cast<size_t>(n) * C;
        const T m = mean[n], s = rstd[n];
        T dnorm_mean = 0, dnorm_norm_mean = 0;
#pragma omp simd reduction(+ : dnorm_mean, dnorm_norm_mean)
        for (int c = 0; c < C; ++c) {
            const T dnorm = w[c] * d[c];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * (x[c] - m) * s;
        }
        dnorm_mean /= static_cast<T>(C);
        dnorm_norm_mean /= static_cast<T>(C);
        for (int c = 0; c < C; ++c) {
            const T norm = (x[c] - m) * s;
            di[c] += (w[c] * d[c] - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
    // The weight and bias gradients sum over rows: each thread owns a range of channels.
#pragma omp parallel for schedule(static) if (parallel_worth(N * C))
    for (int c = 0; c < C; ++c) {
        T gw = 0, gb = 0;
        for (size_t n = 0; n < N; ++n) {
            const T dv = dout[n * C + c];
            gw += dv * (inp[n * C + c] - mean[n]) * rstd[n];
            gb += dv;
        }
        dw[c] += gw;
        db[c] += gb;
    }
}

template void layernorm_forward(float*, float*, float*, const float*, const float*, const float*,
                                size_t, int);
template void layernorm_forward(double*, double*, double*, const double*, const double*,
                                const double*, size_t, int);
template void layernorm_backward(float*, float*, float*, const float*, const float*, const float*,
                                 const float*, const float*, size_t, int);
template void layernorm_backward(double*, double*, double*, const double*, const double*,
                                 const double*, const double*, const double*, size_t, int);

}  // namespace trainrig::train::cpu

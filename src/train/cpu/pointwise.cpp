#include <cmath>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {
namespace {

// GELU(x) ≈ 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (Hendrycks & Gimpel 2016, as GPT-2).
template <class T>
constexpr T kGeluScale = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
template <class T>
constexpr T kGeluCube = static_cast<T>(0.044715);

}  // namespace

template <class T>
void gelu_forward(T* out, const T* inp, size_t n) {
#pragma omp parallel for schedule(static) if (parallel_worth(n))
    for (long i = 0; i < static_cast<long>(n); ++i) {
        const T x = inp[i];
        out[i] = T(0.5) * x * (T(1) + std::tanh(kGeluScale<T> * (x + kGeluCube<T> * x * x * x)));
    }
}

template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, size_t n) {
#pragma omp parallel for schedule(static) if (parallel_worth(n))
    for (long i = 0; i < static_cast<long>(n); ++i) {
        const T x = inp[i];
        const T u = kGeluScale<T> * (x + kGeluCube<T> * x * x * x);
        const T th = std::tanh(u);
        const T du = kGeluScale<T> * (T(1) + T(3) * kGeluCube<T> * x * x);
        const T grad = T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * du;
        dinp[i] += grad * dout[i];
    }
}

template <class T>
void swiglu_forward(T* out, const T* fc, size_t N, int F) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * F))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* gate = fc + static_cast<size_t>(n) * 2 * F;
        const T* up = gate + F;
        T* o = out + static_cast<size_t>(n) * F;
        for (int i = 0; i < F; ++i) o[i] = gate[i] / (T(1) + std::exp(-gate[i])) * up[i];
    }
}

// silu(g) = g·σ(g), silu'(g) = σ(g)·(1 + g·(1 − σ(g))).
template <class T>
void swiglu_backward(T* dfc, const T* fc, const T* dout, size_t N, int F) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * F))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const size_t row = static_cast<size_t>(n) * 2 * F;
        const T* gate = fc + row;
        const T* up = gate + F;
        T* dgate = dfc + row;
        T* dup = dgate + F;
        const T* d = dout + static_cast<size_t>(n) * F;
        for (int i = 0; i < F; ++i) {
            const T g = gate[i], sig = T(1) / (T(1) + std::exp(-g));
            dgate[i] += d[i] * up[i] * sig * (T(1) + g * (T(1) - sig));
            dup[i] += d[i] * g * sig;
        }
    }
}

template <class T>
void residual_forward(T* out, const T* a, const T* b, size_t n) {
#pragma omp parallel for schedule(static) if (parallel_worth(n))
    for (long i = 0; i < static_cast<long>(n); ++i) out[i] = a[i] + b[i];
}

template void gelu_forward(float*, const float*, size_t);
template void gelu_forward(double*, const double*, size_t);
template void gelu_backward(float*, const float*, const float*, size_t);
template void gelu_backward(double*, const double*, const double*, size_t);
template void swiglu_forward(float*, const float*, size_t, int);
template void swiglu_forward(double*, const double*, size_t, int);
template void swiglu_backward(float*, const float*, const float*, size_t, int);
template void swiglu_backward(double*, const double*, const double*, size_t, int);
template void residual_forward(float*, const float*, const float*, size_t);
template void residual_forward(double*, const double*, const double*, size_t);

}  // namespace trainrig::train::cpu

#include <algorithm>
#include <cmath>
#include <limits>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {

template <class T>
void crossentropy_forward(T* losses, T* lse, const T* logits, const uint32_t* targets, size_t N,
                          int V, int Vp) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * V))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        const T* z = logits + static_cast<size_t>(n) * Vp;
        T mx = -std::numeric_limits<T>::infinity();
        for (int v = 0; v < V; ++v) mx = std::max(mx, z[v]);
        T sum = 0;
        for (int v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
        const T l = mx + std::log(sum);
        lse[n] = l;
        losses[n] = l - z[targets[n]];
    }
}

template <class T>
void crossentropy_backward(T* logits, const T* lse, const uint32_t* targets, T dloss, size_t N,
                           int V, int Vp) {
#pragma omp parallel for schedule(static) if (parallel_worth(N * V))
    for (long n = 0; n < static_cast<long>(N); ++n) {
        T* z = logits + static_cast<size_t>(n) * Vp;
        const T l = lse[n];
        for (int v = 0; v < V; ++v) z[v] = std::exp(z[v] - l) * dloss;
        z[targets[n]] -= dloss;
        for (int v = V; v < Vp; ++v) z[v] = 0;
    }
}

template void crossentropy_forward(float*, float*, const float*, const uint32_t*, size_t, int, int);
template void crossentropy_forward(double*, double*, const double*, const uint32_t*, size_t, int,
                                   int);
template void crossentropy_backward(float*, const float*, const uint32_t*, float, size_t, int, int);
template void crossentropy_backward(double*, const double*, const uint32_t*, double, size_t, int,
                                    int);

}  // namespace trainrig::train::cpu

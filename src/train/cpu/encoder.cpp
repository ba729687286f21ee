#include "train/cpu/ops.h"

namespace trainrig::train::cpu {

template <class T>
void encoder_forward(T* out, const uint32_t* tokens, const T* wte, const T* wpe, int B, int Tn,
                     int C) {
    const long rows = static_cast<long>(B) * Tn;
#pragma omp parallel for schedule(static) if (parallel_worth(static_cast <size_t>(B) * Tn * C))
    for (long n = 0; n < rows; ++n) {
        const T* e = wte + static_cast<size_t>(tokens[n]) * C;
        T* o = out + static_cast<size_t>(n) * C;
        if (wpe == nullptr) {
            for (int c = 0; c < C; ++c) o[c] = e[c];
            continue;
        }
        const T* p = wpe + static_cast<size_t>(n % Tn) * C;
        for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
}

template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const uint32_t* tokens, int B, int Tn,
                      int C) {
    // Rows with the same token scatter into the same dwte row: threads split the channels
    // instead of the rows, so no two threads touch one element.
#pragma omp parallel for schedule(static) if (parallel_worth(static_cast <size_t>(B) * Tn * C))
    for (int c = 0; c < C; ++c) {
        for (long n = 0; n < static_cast<long>(B) * Tn; ++n)
            dwte[static_cast<size_t>(tokens[n]) * C + c] += dout[static_cast<size_t>(n) * C + c];
    }
    if (dwpe == nullptr) return;
#pragma omp parallel for schedule(static) if (parallel_worth(static_cast <size_t>(B) * Tn * C))
    for (int t = 0; t < Tn; ++t) {
        T* dp = dwpe + static_cast<size_t>(t) * C;
        for (int b = 0; b < B; ++b) {
            const T* d = dout + (static_cast<size_t>(b) * Tn + t) * C;
            for (int c = 0; c < C; ++c) dp[c] += d[c];
        }
    }
}

template void encoder_forward(float*, const uint32_t*, const float*, const float*, int, int, int);
template void encoder_forward(double*, const uint32_t*, const double*, const double*, int, int,
                              int);
template void encoder_backward(float*, float*, const float*, const uint32_t*, int, int, int);
template void encoder_backward(double*, double*, const double*, const uint32_t*, int, int, int);

}  // namespace trainrig::train::cpu

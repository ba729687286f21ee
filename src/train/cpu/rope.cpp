#include "train/cpu/ops.h"

namespace trainrig::train::cpu {
namespace {

// Rotates the first `heads` heads of one row, starting at `x`, by (cos, sin) of its position;
// sign −1 rotates back (the transpose, for backward).
template <class T>
void rotate_heads(T* x, const T* cos, const T* sin, int heads, int hd, T sign) {
    const int half = hd / 2;
    for (int h = 0; h < heads; ++h) {
        T* a = x + static_cast<size_t>(h) * hd;
        T* b = a + half;
#pragma omp simd
        for (int i = 0; i < half; ++i) {
            const T x1 = a[i], x2 = b[i], s = sign * sin[i];
            a[i] = x1 * cos[i] - x2 * s;
            b[i] = x2 * cos[i] + x1 * s;
        }
    }
}

template <class T>
void rope_apply(T* qkv, const T* cos, const T* sin, int B, int Tn, int NH, int KVH, int hd,
                T sign) {
    const size_t width = static_cast<size_t>(NH + 2 * KVH) * hd;
    const long rows = static_cast<long>(B) * Tn;
#pragma omp parallel for schedule(static) if (parallel_worth(rows * (NH + KVH) * hd))
    for (long n = 0; n < rows; ++n) {
        const size_t t = static_cast<size_t>(n % Tn);
        T* row = qkv + static_cast<size_t>(n) * width;
        const T* c = cos + t * (hd / 2);
        const T* s = sin + t * (hd / 2);
        rotate_heads(row, c, s, NH, hd, sign);                                  // q
        rotate_heads(row + static_cast<size_t>(NH) * hd, c, s, KVH, hd, sign);  // k
    }
}

}  // namespace

template <class T>
void rope_forward(T* qkv, const T* cos, const T* sin, int B, int Tn, int NH, int KVH, int hd) {
    rope_apply(qkv, cos, sin, B, Tn, NH, KVH, hd, T(1));
}

template <class T>
void rope_backward(T* dqkv, const T* cos, const T* sin, int B, int Tn, int NH, int KVH, int hd) {
    rope_apply(dqkv, cos, sin, B, Tn, NH, KVH, hd, T(-1));
}

template void rope_forward(float*, const float*, const float*, int, int, int, int, int);
template void rope_forward(double*, const double*, const double*, int, int, int, int, int);
template void rope_backward(float*, const float*, const float*, int, int, int, int, int);
template void rope_backward(double*, const double*, const double*, int, int, int, int, int);

}  // namespace trainrig::train::cpu

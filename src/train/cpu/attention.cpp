#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "train/cpu/ops.h"

namespace trainrig::train::cpu {
namespace {

template <class T>
T dot(const T* a, const T* b, int n) {
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

// Each (batch, head) pair reads and writes only its own columns of out, so pairs run in
// parallel without sharing anything.
template <class T>
void attention_forward(T* out, T* lse, const T* qkv, int B, int Tn, int NH, int KVH, int hs) {
    const size_t W = static_cast<size_t>(NH + 2 * KVH) * hs;  // a row of qkv
    const size_t C = static_cast<size_t>(NH) * hs;            // a row of out
    const size_t koff = C, voff = C + static_cast<size_t>(KVH) * hs;
    const int group = NH / KVH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
#pragma omp parallel if (parallel_worth(static_cast <size_t>(B) * NH * Tn * Tn * hs))
    {
        std::vector<T> p(static_cast<size_t>(Tn));
#pragma omp for schedule(static)
        for (long bh = 0; bh < static_cast<long>(B) * NH; ++bh) {
            const int b = static_cast<int>(bh / NH), h = static_cast<int>(bh % NH);
            const size_t kv = static_cast<size_t>(h / group) * hs;
            const T* base = qkv + static_cast<size_t>(b) * Tn * W;
            for (int t = 0; t < Tn; ++t) {
                const T* q = base + t * W + static_cast<size_t>(h) * hs;
                T mx = -std::numeric_limits<T>::infinity();
                for (int s = 0; s <= t; ++s) {
                    p[s] = dot(q, base + s * W + koff + kv, hs) * scale;
                    mx = std::max(mx, p[s]);
                }
                T sum = 0;
                for (int s = 0; s <= t; ++s) {
                    p[s] = std::exp(p[s] - mx);
                    sum += p[s];
                }
                const T inv = T(1) / sum;
                T* o = out + (static_cast<size_t>(b) * Tn + t) * C + static_cast<size_t>(h) * hs;
                for (int i = 0; i < hs; ++i) o[i] = 0;
                for (int s = 0; s <= t; ++s) {
                    const T ps = p[s] * inv;
                    const T* v = base + s * W + voff + kv;
#pragma omp simd
                    for (int i = 0; i < hs; ++i) o[i] += ps * v[i];
                }
                lse[(static_cast<size_t>(b) * NH + h) * Tn + t] = mx + std::log(sum);
            }
        }
    }
}

// With P = softmax(S), S = scale·Q·Kᵀ (causal) and O = P·V:
//   dV = Pᵀ·dO,  dP = dO·Vᵀ,  dS = P ∘ (dP − rowsum(dO ∘ O)),  dQ = scale·dS·K,  dK = scale·dSᵀ·Q.
// P is recomputed from the saved log-sum-exp, one row at a time. The query heads that share a
// key/value head all add into its dK and dV, so work is split by (batch, key/value head): one
// thread owns those sums and adds the group's heads in a fixed order.
template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* out, const T* lse, int B,
                        int Tn, int NH, int KVH, int hs) {
    const size_t W = static_cast<size_t>(NH + 2 * KVH) * hs;
    const size_t C = static_cast<size_t>(NH) * hs;
    const size_t koff = C, voff = C + static_cast<size_t>(KVH) * hs;
    const int group = NH / KVH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
#pragma omp parallel for schedule( \
    static) if (parallel_worth(static_cast <size_t>(B) * NH * Tn * Tn * hs))
    for (long bkv = 0; bkv < static_cast<long>(B) * KVH; ++bkv) {
        const int b = static_cast<int>(bkv / KVH), g = static_cast<int>(bkv % KVH);
        const size_t kv = static_cast<size_t>(g) * hs;
        const T* base = qkv + static_cast<size_t>(b) * Tn * W;
        T* dbase = dqkv + static_cast<size_t>(b) * Tn * W;
        for (int h = g * group; h < (g + 1) * group; ++h) {
            const size_t hoff = static_cast<size_t>(h) * hs;
            for (int t = 0; t < Tn; ++t) {
                const size_t row = static_cast<size_t>(b) * Tn + t;
                const T* q = base + t * W + hoff;
                const T* dO = dout + row * C + hoff;
                const T D = dot(dO, out + row * C + hoff, hs);
                const T l = lse[(static_cast<size_t>(b) * NH + h) * Tn + t];
                T* dq = dbase + t * W + hoff;
                for (int s = 0; s <= t; ++s) {
                    const T* k = base + s * W + koff + kv;
                    const T* v = base + s * W + voff + kv;
                    const T p = std::exp(dot(q, k, hs) * scale - l);
                    const T dS = p * (dot(dO, v, hs) - D) * scale;
                    T* dk = dbase + s * W + koff + kv;
                    T* dv = dbase + s * W + voff + kv;
#pragma omp simd
                    for (int i = 0; i < hs; ++i) {
                        dq[i] += dS * k[i];
                        dk[i] += dS * q[i];
                        dv[i] += p * dO[i];
                    }
                }
            }
        }
    }
}

template void attention_forward(float*, float*, const float*, int, int, int, int, int);
template void attention_forward(double*, double*, const double*, int, int, int, int, int);
template void attention_backward(float*, const float*, const float*, const float*, const float*,
                                 int, int, int, int, int);
template void attention_backward(double*, const double*, const double*, const double*,
                                 const double*, int, int, int, int, int);

}  // namespace trainrig::train::cpu

// nvcuda::wmma for device code compiled by the host compiler: 16×16×16 fragments whose loads,
// products and stores are warp-collective operations, with the rules of the CUDA C++
// Programming Guide's "Warp Matrix Functions": every lane passes the same pointer, stride and
// layout; the pointer is 256-bit aligned; the stride is a multiple of 16 bytes. How a fragment's
// elements are spread over the lanes is unspecified on a GPU; here they are scrambled on
// purpose, so code that relied on one mapping gives wrong results.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "exec/block_run.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
    static_assert(M == 16 && N == 16 && K == 16, "only the m16n16k16 shape is emulated");

public:
    static constexpr int num_elements = 8;  // 256 elements over 32 lanes
    T x[num_elements];
};

}  // namespace nvcuda::wmma

namespace trainrig::emu {

enum WmmaKind : int { kWmmaLoad = 64, kWmmaStore, kWmmaMma };

// The tile element (row · 16 + column) that slot i of lane l holds: a bijection of 0..255.
constexpr int wmma_element(int lane, int slot) { return (((lane * 8 + slot) * 197) + 59) & 255; }

// Checks what every lane gave alike and the alignment rules; traps naming the operation.
void check_wmma_memory(WarpOp* const lanes[32], const char* what, size_t element_bytes);

template <class T>
float wmma_widen(T v) {
    if constexpr (std::is_same_v<T, float>)
        return v;
    else
        return static_cast<float>(v);
}

template <class T>
T wmma_narrow(float v) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __float2bfloat16_rn(v);
    else if constexpr (std::is_same_v<T, __half>)
        return __float2half_rn(v);
    else
        return static_cast<T>(v);
}

// Where element (r, c) of the tile lies in memory: the fragment's own layout for matrix_a/b, the
// one the call names for an accumulator.
inline size_t wmma_offset(int r, int c, size_t ld, bool col_major) {
    return col_major ? static_cast<size_t>(c) * ld + static_cast<size_t>(r)
                     : static_cast<size_t>(r) * ld + static_cast<size_t>(c);
}

template <class Frag, class T>
void resolve_wmma_load(WarpOp* const lanes[32], unsigned) {
    check_wmma_memory(lanes, "load_matrix_sync", sizeof(T));
    const T* p = static_cast<const T*>(lanes[0]->ptr[1]);
    for (int l = 0; l < 32; ++l) {
        auto* frag = static_cast<Frag*>(const_cast<void*>(lanes[l]->ptr[0]));
        for (int i = 0; i < Frag::num_elements; ++i) {
            const int e = wmma_element(l, i);
            frag->x[i] = p[wmma_offset(e / 16, e % 16, lanes[0]->ld, lanes[0]->layout != 0)];
        }
    }
}

template <class Frag, class T>
void resolve_wmma_store(WarpOp* const lanes[32], unsigned) {
    check_wmma_memory(lanes, "store_matrix_sync", sizeof(T));
    T* p = static_cast<T*>(const_cast<void*>(lanes[0]->ptr[1]));
    for (int l = 0; l < 32; ++l) {
        const auto* frag = static_cast<const Frag*>(lanes[l]->ptr[0]);
        for (int i = 0; i < Frag::num_elements; ++i) {
            const int e = wmma_element(l, i);
            p[wmma_offset(e / 16, e % 16, lanes[0]->ld, lanes[0]->layout != 0)] = frag->x[i];
        }
    }
}

// D = A·B + C with fp32 products and sums, k in order.
template <class FD, class FA, class FB, class FC>
void resolve_wmma_mma(WarpOp* const lanes[32], unsigned) {
    float a[256], b[256], c[256];
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 8; ++i) {
            const int e = wmma_element(l, i);
            a[e] = wmma_widen(static_cast<const FA*>(lanes[l]->ptr[1])->x[i]);
            b[e] = wmma_widen(static_cast<const FB*>(lanes[l]->ptr[2])->x[i]);
            c[e] = wmma_widen(static_cast<const FC*>(lanes[l]->ptr[3])->x[i]);
        }
    for (int l = 0; l < 32; ++l) {
        auto* d = static_cast<FD*>(const_cast<void*>(lanes[l]->ptr[0]));
        for (int i = 0; i < 8; ++i) {
            const int e = wmma_element(l, i);
            const int r = e / 16, n = e % 16;
            float sum = c[e];
            for (int k = 0; k < 16; ++k) sum += a[r * 16 + k] * b[k * 16 + n];
            d->x[i] = wmma_narrow<std::remove_reference_t<decltype(d->x[0])>>(sum);
        }
    }
}

// A load or store: the whole warp moves the tile between `frag` and `memory` at once.
inline void wmma_memory_op(int kind, const void* frag, const void* memory, unsigned ldm, int layout,
                           WarpResolver resolve) {
    WarpOp op;
    op.kind = kind;
    op.mask = 0xffffffffu;
    op.ptr[0] = frag;
    op.ptr[1] = memory;
    op.ld = ldm;
    op.layout = layout;
    this_block().warp_collective(op, resolve);
}

template <class Layout>
constexpr int fragment_layout() {
    return std::is_same_v<Layout, nvcuda::wmma::col_major> ? 1 : 0;
}

}  // namespace trainrig::emu

namespace nvcuda::wmma {

template <class Use, int M, int N, int K, class T, class L>
void fill_fragment(fragment<Use, M, N, K, T, L>& f, const T& v) {
    for (auto& e : f.x) e = v;
}
template <class Use, int M, int N, int K, class T, class L, class V>
void fill_fragment(fragment<Use, M, N, K, T, L>& f, const V& v) {
    for (auto& e : f.x) e = static_cast<T>(v);
}

template <class Use, int M, int N, int K, class T, class L>
void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
    static_assert(!std::is_same_v<Use, accumulator>, "an accumulator load names its layout");
    trainrig::emu::wmma_memory_op(
        trainrig::emu::kWmmaLoad, &f, p, ldm, trainrig::emu::fragment_layout<L>(),
        trainrig::emu::resolve_wmma_load<fragment<Use, M, N, K, T, L>, T>);
}

template <int M, int N, int K, class T>
void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm,
                      layout_t layout) {
    trainrig::emu::wmma_memory_op(
        trainrig::emu::kWmmaLoad, &f, p, ldm, layout == mem_col_major ? 1 : 0,
        trainrig::emu::resolve_wmma_load<fragment<accumulator, M, N, K, T>, T>);
}

template <int M, int N, int K, class T>
void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm,
                       layout_t layout) {
    trainrig::emu::wmma_memory_op(
        trainrig::emu::kWmmaStore, &f, p, ldm, layout == mem_col_major ? 1 : 0,
        trainrig::emu::resolve_wmma_store<fragment<accumulator, M, N, K, T>, T>);
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
void mma_sync(fragment<accumulator, M, N, K, TC>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
              const fragment<matrix_b, M, N, K, TB, LB>& b,
              const fragment<accumulator, M, N, K, TC>& c) {
    trainrig::emu::WarpOp op;
    op.kind = trainrig::emu::kWmmaMma;
    op.mask = 0xffffffffu;
    op.ptr[0] = &d;
    op.ptr[1] = &a;
    op.ptr[2] = &b;
    op.ptr[3] = &c;
    trainrig::emu::this_block().warp_collective(
        op, trainrig::emu::resolve_wmma_mma<
                fragment<accumulator, M, N, K, TC>, fragment<matrix_a, M, N, K, TA, LA>,
                fragment<matrix_b, M, N, K, TB, LB>, fragment<accumulator, M, N, K, TC>>);
}

}  // namespace nvcuda::wmma

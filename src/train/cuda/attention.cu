// Fused causal self-attention for the CUDA backend (attention.h): forward and a deterministic
// backward, FlashAttention-2 style, with the matrix products on tensor cores through
// nvcuda::wmma (bf16 16×16×16 tiles, fp32 accumulators). Grouped-query attention: query head h
// reads key/value head h / (NH/KVH); multi-head attention is the case KVH = NH.
//
// Tiles are 64 queries × 64 keys; a block has 4 warps and warp w owns rows 16w..16w+15 of its
// block's tile. The wmma accumulator layout is unspecified, so every product that feeds an
// elementwise step (scores, dP, the P·V update, the final gradients) is stored to a per-warp fp32
// tile in shared memory and read back with a known mapping: two lanes per row, lane `half` taking
// the columns 2c + half (interleaved so the two lanes of a row sit on different banks).
//
// Forward, one block per (batch·head, query tile), heaviest tiles first: the Q tile stays in
// shared memory while the block walks the key tiles up to the diagonal. Per tile K and V are
// staged in shared memory, each warp stores S = Q·Kᵀ for its rows, its lanes mask it causally and
// update the row's running max and sum (fp32, base 2 with the 1/sqrt(HS) scale folded into the
// exponent), write P in bf16, and add P·V to their fp32 output registers after rescaling them by
// exp2(m_old − m_new).
//
// Backward, two kernels and no atomics, so results are bit-reproducible:
//   dQ:    per (batch·head, query tile): D = rowsum(dO ∘ O) for its rows (also saved to the
//          scratch for the next kernel), then over key tiles ≤ diagonal: S = Q·Kᵀ, dP = dO·Vᵀ,
//          P = exp(scale·S − lse), dS = P ∘ (dP − D), dQ += dS·K in accumulator fragments.
//   dK/dV: per (batch·key/value head, key tile), warp w owning 16 keys: for each query head of
//          the group in turn, over query tiles ≥ diagonal: Sᵀ = K·Qᵀ, dPᵀ = V·dOᵀ, Pᵀ and dSᵀ
//          as above, dV += Pᵀ·dO, dK += dSᵀ·Q. The group's heads add into the same fragments in
//          a fixed order, so a shared key/value head needs no atomics either.
// dQ and dK are multiplied by the scale once at the end; each gradient element is written once.
// P and dS enter their products rounded to bf16, as in FlashAttention; sums, maxima, lse, D and
// all accumulators stay fp32.
//
// Speed limits: every score tile makes a round trip through shared memory, global loads are
// synchronous (no cp.async double buffering, so the tensor cores idle while a tile loads), the
// diagonal tile computes its fully masked fragments anyway, and wmma compiles to mma.sync rather
// than Hopper's wgmma; expect a fraction of FlashAttention-2/3's throughput (not measured).
// Global traffic is O(T²·HS/64) per head and no T×T matrix is stored. The dK/dV kernel
// recomputes the S and dP that the dQ kernel also computes (the price of not using atomics).
// Grid: y is the tile index, so T ≤ 65535·64.
#include <cuda_bf16.h>
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuda/launch.h"
#include "train/attention_smem.h"
#include "train/cuda/attention.h"

namespace trainrig::train::cuda {
namespace {

namespace wmma = nvcuda::wmma;
using bf16 = __nv_bfloat16;

constexpr int kTile = AttentionSmem::kTile;  // queries and keys per tile
constexpr int kWarps = AttentionSmem::kWarps;
constexpr int kThreads = kWarps * 32;
constexpr int kFrag = AttentionSmem::kFrag;  // wmma M = N = K
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
static_assert(kTile == kWarps * kFrag, "each warp owns one fragment row of a tile");

using FragA = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
using FragBRow = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::col_major>;
using FragAcc = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;

static_assert(sizeof(bf16) == AttentionSmem::kBf16 && sizeof(float) == AttentionSmem::kF32,
              "train/attention_smem.h counts these sizes");

// Shared-memory geometry, from train/attention_smem.h (which the device check before the first
// launch reads too). Row strides are padded by 16 bytes so that consecutive rows start on
// different banks; wmma needs strides that are multiples of 16 bytes and fragment pointers on
// 32-byte boundaries, which these strides and the 32-byte-multiple region sizes keep.
template <int HS>
struct Dims {
    static constexpr AttentionSmem kLayout{HS};
    static constexpr int kLdH = kLayout.ld_h();  // bf16 stride of the Q, K, V, dO tiles
    static constexpr int kLdP = kLayout.ld_p();  // bf16 stride of the P and dS tiles
    static constexpr int kLdS = kLayout.ld_s();  // fp32 stride of score tiles
    static constexpr int kLdO = kLayout.ld_o();  // fp32 stride of HS-wide result tiles
    static constexpr int kTileElems = kLayout.tile_elems();
    static constexpr int kPElems = kLayout.p_elems();
    // Per-warp fp32 region. Forward: S, then the P·V product in the same place. Backward: S and
    // dP side by side, then the final gradient rows.
    static constexpr int kScoreF = kLayout.score_f();  // a warp's 16×64 scores
    static constexpr int kFwdWarpF = kLayout.fwd_warp_f();
    static constexpr int kBwdWarpF = kLayout.bwd_warp_f();
    static constexpr size_t kFwdSmem = kLayout.forward_bytes();
    static constexpr size_t kDqSmem = kLayout.dq_bytes();
    static constexpr size_t kDkvSmem = kLayout.dkv_bytes();
    static_assert(HS % kFrag == 0, "head size must be a multiple of the fragment size");
    static_assert((kFwdWarpF * sizeof(float)) % 32 == 0 && (kBwdWarpF * sizeof(float)) % 32 == 0 &&
                      (kTileElems * sizeof(bf16)) % 32 == 0 && (kPElems * sizeof(bf16)) % 32 == 0,
                  "regions must keep wmma's 32-byte alignment");
};

// A kernel's dynamic shared memory as Dims lays it out: the warps' fp32 regions (warp_f floats
// each) first, then bf16 tiles of kTileElems one after another.
template <int HS>
struct Carve {
    float* f;
    bf16* tiles;
    __device__ Carve(unsigned char* smem, int warp_f)
        : f(reinterpret_cast<float*>(smem)), tiles(reinterpret_cast<bf16*>(f + kWarps * warp_f)) {}
    __device__ bf16* tile(int i) const { return tiles + i * Dims<HS>::kTileElems; }
};

// Blocks per SM the register allocation is sized for. Backward: two, all that the ~80-90 KiB of
// shared memory per block allows anyway up to HS = 64; at 128 a block takes 111-111.5 KiB, two
// of which fit an H100's SM and one an A100's. Forward: three up to HS = 64 (54 KiB each), which
// keeps the registers below 170 without spilling; two at HS = 128, where shared memory allows no
// more.
constexpr int kBwdMinBlocks = 2;
template <int HS>
constexpr int kFwdMinBlocks = HS <= 64 ? 3 : 2;

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    unsigned u;
    memcpy(&u, &v, sizeof u);
    return u;
}

// Copies rows r0..r0+63 (HS values each, global row stride ld) into a padded shared tile. Rows
// at or past T are zeroed: they only ever meet masked (zero) probabilities, and 0 · garbage
// could be NaN. vec: all pointers 16-byte aligned, so rows move in 16-byte pieces (HS, the row
// widths and the head offsets are multiples of 8 elements).
template <int HS>
__device__ void load_tile(bf16* dst, const bf16* src, size_t ld, int r0, int T, bool vec) {
    constexpr int kLd = Dims<HS>::kLdH;
    if (vec) {
        constexpr int kChunks = HS / 8;
        for (int i = threadIdx.x; i < kTile * kChunks; i += kThreads) {
            const int r = i / kChunks, c = (i % kChunks) * 8;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (r0 + r < T) v = *reinterpret_cast<const uint4*>(src + (r0 + r) * ld + c);
            *reinterpret_cast<uint4*>(dst + r * kLd + c) = v;
        }
    } else {
        for (int i = threadIdx.x; i < kTile * HS; i += kThreads) {
            const int r = i / HS, c = i % HS;
            dst[r * kLd + c] = r0 + r < T ? src[(r0 + r) * ld + c] : __float2bfloat16(0.f);
        }
    }
}

// Writes a warp's 16 staged fp32 rows (stride kLdO) as bf16 to rows t0..t0+15 of dst (stride
// ld), skipping rows at or past T.
template <int HS>
__device__ void store_rows(bf16* dst, size_t ld, int t0, int T, const float* stage, int lane,
                           bool vec) {
    constexpr int kLd = Dims<HS>::kLdO;
    if (vec) {
        constexpr int kChunks = HS / 8;
        for (int i = lane; i < kFrag * kChunks; i += 32) {
            const int r = i / kChunks, c = (i % kChunks) * 8;
            if (t0 + r >= T) continue;
            const float* s = stage + r * kLd + c;
            const uint4 v = make_uint4(pack_bf16x2(s[0], s[1]), pack_bf16x2(s[2], s[3]),
                                       pack_bf16x2(s[4], s[5]), pack_bf16x2(s[6], s[7]));
            *reinterpret_cast<uint4*>(dst + (t0 + r) * ld + c) = v;
        }
    } else {
        for (int i = lane; i < kFrag * HS; i += 32) {
            const int r = i / HS, c = i % HS;
            if (t0 + r < T) dst[(t0 + r) * ld + c] = __float2bfloat16(stage[r * kLd + c]);
        }
    }
}

// acc (16×16) = A (16×HS, row-major, stride lda) · Bᵀ where B is 16×HS row-major (stride ldb):
// the score-shaped products Q·Kᵀ, dO·Vᵀ, K·Qᵀ, V·dOᵀ, with both operands read from shared memory.
template <int HS>
__device__ void mma_abt(FragAcc& acc, const bf16* a, int lda, const bf16* b, int ldb) {
    wmma::fill_fragment(acc, 0.f);
#pragma unroll
    for (int kk = 0; kk < HS / kFrag; ++kk) {
        FragA fa;
        FragBCol fb;
        wmma::load_matrix_sync(fa, a + kk * kFrag, lda);
        wmma::load_matrix_sync(fb, b + kk * kFrag, ldb);
        wmma::mma_sync(acc, fa, fb, acc);
    }
}

// A warp's 16 × 64 score tile rows·tileᵀ, stored fp32 to dst at stride kLdS: rows are the warp's
// 16 rows of one operand, tile all 64 rows of the other, both HS wide at stride kLdH.
template <int HS>
__device__ void score_tile(float* dst, const bf16* rows, const bf16* tile) {
    using D = Dims<HS>;
#pragma unroll
    for (int j = 0; j < kTile / kFrag; ++j) {
        FragAcc acc;
        mma_abt<HS>(acc, rows, D::kLdH, tile + j * kFrag * D::kLdH, D::kLdH);
        wmma::store_matrix_sync(dst + j * kFrag, acc, D::kLdS, wmma::mem_row_major);
    }
}

// Writes a warp's HS-wide accumulators, times `scale`, as bf16 rows r0..r0+15 of dst (stride ld),
// staged through its fp32 region `stage`. The caller has ordered its reads of `stage` before.
template <int HS>
__device__ void store_gradient(FragAcc (&acc)[HS / kFrag], float scale, float* stage, bf16* dst,
                               size_t ld, int r0, int T, int lane, bool vec) {
#pragma unroll
    for (int j = 0; j < HS / kFrag; ++j) {
#pragma unroll
        for (int i = 0; i < acc[j].num_elements; ++i) acc[j].x[i] *= scale;
        wmma::store_matrix_sync(stage + j * kFrag, acc[j], Dims<HS>::kLdO, wmma::mem_row_major);
    }
    __syncwarp();
    store_rows<HS>(dst, ld, r0, T, stage, lane, vec);
}

// A warp's 16 × 64 bf16 tile (stride kLdP) as the A fragments of a product over its 64 columns.
template <int HS>
__device__ void row_fragments(FragA (&a)[kTile / kFrag], const bf16* tile) {
#pragma unroll
    for (int kk = 0; kk < kTile / kFrag; ++kk)
        wmma::load_matrix_sync(a[kk], tile + kk * kFrag, Dims<HS>::kLdP);
}

// Where a batch row's heads lie in qkv: a row is [q: NH·HS | k: KVH·HS | v: KVH·HS], so its
// stride is (NH + 2·KVH)·HS, K starts at NH·HS and V at (NH + KVH)·HS. out, dout and the q part
// are C = NH·HS wide. With KVH = NH this is GPT-2's [q | k | v] of 3C.
template <int HS>
struct Rows {
    int C;        // NH·HS: a row of out and dout
    size_t ld;    // a row of qkv and dqkv
    size_t koff;  // from a row's start to key/value head 0 of K
    size_t voff;  // ... and of V
    __device__ Rows(int NH, int KVH)
        : C(NH * HS),
          ld(static_cast<size_t>(NH + 2 * KVH) * HS),
          koff(static_cast<size_t>(NH) * HS),
          voff(static_cast<size_t>(NH + KVH) * HS) {}
};

// Where this thread works in its block: warp w owns tile rows 16w..16w+15, two lanes share a
// row, and lane `half` takes the columns 2c + half.
struct Lane {
    int warp, lane, row, half;
    __device__ Lane()
        : warp(static_cast<int>(threadIdx.x) / 32),
          lane(static_cast<int>(threadIdx.x) % 32),
          row(lane / 2),
          half(lane % 2) {}
    // The first of this warp's rows in the tile that starts at r0.
    __device__ int first(int r0) const { return r0 + warp * kFrag; }
};

// A forward or dQ block: batch·head blockIdx.x, query tile gridDim.y - 1 - blockIdx.y (the
// longest rows start first); the head's Q, K and V in batch row b of qkv, and this lane's query.
template <int HS>
struct QueryBlock : Rows<HS> {
    int bh, b, h, qt, q0, t;
    size_t hoff;  // the head's first column in q, out and dout
    const bf16* q;
    const bf16* k;
    const bf16* v;
    __device__ QueryBlock(const bf16* qkv, int T, int NH, int KVH, const Lane& me)
        : Rows<HS>(NH, KVH),
          bh(static_cast<int>(blockIdx.x)),
          b(bh / NH),
          h(bh % NH),
          qt(static_cast<int>(gridDim.y - 1 - blockIdx.y)),
          q0(qt * kTile),
          t(me.first(q0) + me.row),
          hoff(static_cast<size_t>(h) * HS) {
        const bf16* base = qkv + static_cast<size_t>(b) * T * this->ld;
        const size_t kv = static_cast<size_t>(h / (NH / KVH)) * HS;  // its key/value head
        q = base + hoff;
        k = base + this->koff + kv;
        v = base + this->voff + kv;
    }
};

// A dK/dV block: batch·key/value head blockIdx.x and key tile blockIdx.y (tile 0 meets the most
// queries and starts first); the head's K and V in batch row b of qkv, and this lane's key.
template <int HS>
struct KeyBlock : Rows<HS> {
    int b, g, kt, k0, key;
    size_t kv;  // the key/value head's first column in K and in V
    const bf16* base;
    const bf16* k;
    const bf16* v;
    __device__ KeyBlock(const bf16* qkv, int T, int NH, int KVH, const Lane& me)
        : Rows<HS>(NH, KVH),
          b(static_cast<int>(blockIdx.x) / KVH),
          g(static_cast<int>(blockIdx.x) % KVH),
          kt(static_cast<int>(blockIdx.y)),
          k0(kt * kTile),
          key(me.first(k0) + me.row),
          kv(static_cast<size_t>(g) * HS),
          base(qkv + static_cast<size_t>(b) * T * this->ld),
          k(base + this->koff + kv),
          v(base + this->voff + kv) {}
};

template <int HS>
__global__ void __launch_bounds__(kThreads, kFwdMinBlocks<HS>)
    attention_forward_kernel(bf16* out, float* lse, const bf16* qkv, int T, int NH, int KVH,
                             float scale_log2, bool vec) {
    using D = Dims<HS>;
    TRAINRIG_DYNAMIC_SHARED(unsigned char, smem);
    const Carve<HS> sm(smem, D::kFwdWarpF);
    float* sF = sm.f;
    bf16 *sQ = sm.tile(0), *sK = sm.tile(1), *sV = sm.tile(2), *sP = sm.tile(3);

    const Lane me;
    const QueryBlock<HS> at(qkv, T, NH, KVH, me);
    const int row = me.row, half = me.half, qt = at.qt, t = at.t;
    const size_t ld = at.ld;
    float* sS = sF + me.warp * D::kFwdWarpF;  // this warp's scores, then its P·V
    bf16* sPw = sP + me.warp * kFrag * D::kLdP;

    load_tile<HS>(sQ, at.q, ld, at.q0, T, vec);  // published by the first barrier in the loop

    float o[HS / 2];
#pragma unroll
    for (int c = 0; c < HS / 2; ++c) o[c] = 0.f;
    float m = -INFINITY, l = 0.f;  // running max (base 2, scaled) and sum of this row

    for (int kt = 0; kt <= qt; ++kt) {
        const int k0 = kt * kTile;
        __syncthreads();  // every warp is done with the previous K and V
        load_tile<HS>(sK, at.k, ld, k0, T, vec);
        load_tile<HS>(sV, at.v, ld, k0, T, vec);
        __syncthreads();

        score_tile<HS>(sS, sQ + me.warp * kFrag * D::kLdH, sK);
        __syncwarp();

        // Keys k0 + col ≤ t are visible. k0 ≤ q0 ≤ t, so every row has a visible key in every
        // tile it visits and m_new is finite; m_ref still keeps exp2 away from (-inf) - (-inf).
        float s[kTile / 2];
        float mx = -INFINITY;
#pragma unroll
        for (int c = 0; c < kTile / 2; ++c) {
            const int col = 2 * c + half;
            s[c] = k0 + col <= t ? sS[row * D::kLdS + col] * scale_log2 : -INFINITY;
            mx = fmaxf(mx, s[c]);
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        const float m_new = fmaxf(m, mx);
        const float m_ref = m_new == -INFINITY ? 0.f : m_new;  // no (-inf) - (-inf)
        const float alpha = exp2f(m - m_ref);                  // 0 on the first tile
        float sum = 0.f;
#pragma unroll
        for (int c = 0; c < kTile / 2; ++c) {
            const float p = exp2f(s[c] - m_ref);
            sum += p;
            sPw[row * D::kLdP + 2 * c + half] = __float2bfloat16(p);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * alpha + sum;
        m = m_new;
        __syncwarp();  // P is complete, and the reads of S are done before P·V overwrites it

        FragA pf[kTile / kFrag];

        row_fragments<HS>(pf, sPw);
#pragma unroll
        for (int j = 0; j < HS / kFrag; ++j) {
            FragAcc acc;
            wmma::fill_fragment(acc, 0.f);
#pragma unroll
            for (int kk = 0; kk < kTile / kFrag; ++kk) {
                FragBRow vf;
                wmma::load_matrix_sync(vf, sV + kk * kFrag * D::kLdH + j * kFrag, D::kLdH);
                wmma::mma_sync(acc, pf[kk], vf, acc);
            }
            wmma::store_matrix_sync(sS + j * kFrag, acc, D::kLdO, wmma::mem_row_major);
        }
        __syncwarp();
#pragma unroll
        for (int c = 0; c < HS / 2; ++c) o[c] = o[c] * alpha + sS[row * D::kLdO + 2 * c + half];
        // The next tile's barrier orders these reads before S overwrites them.
    }

    // Each lane rewrites only the staging cells it read last, then the warp writes its rows.
    const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
    for (int c = 0; c < HS / 2; ++c) sS[row * D::kLdO + 2 * c + half] = o[c] * inv;
    __syncwarp();
    store_rows<HS>(out + static_cast<size_t>(at.b) * T * at.C + at.hoff, at.C, me.first(at.q0), T,
                   sS, me.lane, vec);
    if (half == 0 && t < T) lse[static_cast<size_t>(at.bh) * T + t] = (m + log2f(l)) * kLn2;
}

template <int HS>
__global__ void __launch_bounds__(kThreads, kBwdMinBlocks)
    attention_backward_dq_kernel(bf16* dqkv, float* dsum, const bf16* dout, const bf16* qkv,
                                 const bf16* out, const float* lse, int T, int NH, int KVH,
                                 float scale, float scale_log2, bool vec) {
    using D = Dims<HS>;
    TRAINRIG_DYNAMIC_SHARED(unsigned char, smem);
    const Carve<HS> sm(smem, D::kBwdWarpF);
    float* sF = sm.f;
    bf16 *sQ = sm.tile(0), *sdO = sm.tile(1), *sK = sm.tile(2), *sV = sm.tile(3), *sDS = sm.tile(4);

    const Lane me;
    const QueryBlock<HS> at(qkv, T, NH, KVH, me);
    const int row = me.row, half = me.half, qt = at.qt, t = at.t, C = at.C;
    const size_t ld = at.ld;
    const bf16* dO = dout + static_cast<size_t>(at.b) * T * C + at.hoff;
    const bf16* O = out + static_cast<size_t>(at.b) * T * C + at.hoff;
    float* sS = sF + me.warp * D::kBwdWarpF;  // this warp's S, then its dQ rows
    float* sdP = sS + D::kScoreF;
    bf16* sDSw = sDS + me.warp * kFrag * D::kLdP;
    const bf16* sQw = sQ + me.warp * kFrag * D::kLdH;
    const bf16* sdOw = sdO + me.warp * kFrag * D::kLdH;

    load_tile<HS>(sQ, at.q, ld, at.q0, T, vec);
    load_tile<HS>(sdO, dO, C, at.q0, T, vec);
    __syncthreads();

    // D_t = dO_t · O_t, from the same bf16 values the loss saw; the dK/dV kernel reads it back.
    float lse2 = 0.f, Dt = 0.f;
    if (t < T) {
        lse2 = lse[static_cast<size_t>(at.bh) * T + t] * kLog2e;
        for (int c = 0; c < HS / 2; ++c) {
            const int d = 2 * c + half;
            Dt += __bfloat162float(sdOw[row * D::kLdH + d]) *
                  __bfloat162float(O[static_cast<size_t>(t) * C + d]);
        }
    }
    Dt += __shfl_xor_sync(0xffffffffu, Dt, 1);
    if (half == 0 && t < T) dsum[static_cast<size_t>(at.bh) * T + t] = Dt;

    FragAcc dq[HS / kFrag];
#pragma unroll
    for (int j = 0; j < HS / kFrag; ++j) wmma::fill_fragment(dq[j], 0.f);

    for (int kt = 0; kt <= qt; ++kt) {
        const int k0 = kt * kTile;
        __syncthreads();  // every warp is done with the previous K and V
        load_tile<HS>(sK, at.k, ld, k0, T, vec);
        load_tile<HS>(sV, at.v, ld, k0, T, vec);
        __syncthreads();

        score_tile<HS>(sS, sQw, sK);    // S = Q·Kᵀ
        score_tile<HS>(sdP, sdOw, sV);  // dP = dO·Vᵀ
        __syncwarp();

        // Masked entries (key after the query, or a padding row) get dS = 0 without evaluating
        // exp, so no inf or NaN can arise from them.
#pragma unroll
        for (int c = 0; c < kTile / 2; ++c) {
            const int col = 2 * c + half;
            float ds = 0.f;
            if (k0 + col <= t && t < T) {
                const float p = exp2f(sS[row * D::kLdS + col] * scale_log2 - lse2);
                ds = p * (sdP[row * D::kLdS + col] - Dt);
            }
            sDSw[row * D::kLdP + col] = __float2bfloat16(ds);
        }
        __syncwarp();

        FragA af[kTile / kFrag];

        row_fragments<HS>(af, sDSw);
#pragma unroll
        for (int j = 0; j < HS / kFrag; ++j) {
#pragma unroll
            for (int kk = 0; kk < kTile / kFrag; ++kk) {
                FragBRow kf;
                wmma::load_matrix_sync(kf, sK + kk * kFrag * D::kLdH + j * kFrag, D::kLdH);
                wmma::mma_sync(dq[j], af[kk], kf, dq[j]);
            }
        }
    }

    // The last __syncwarp above ordered this warp's reads of S and dP before these stores.
    store_gradient<HS>(dq, scale, sS, dqkv + static_cast<size_t>(at.b) * T * ld + at.hoff, ld,
                       me.first(at.q0), T, me.lane, vec);
}

template <int HS>
__global__ void __launch_bounds__(kThreads, kBwdMinBlocks)
    attention_backward_dkv_kernel(bf16* dqkv, const float* dsum, const bf16* dout, const bf16* qkv,
                                  const float* lse, int T, int NH, int KVH, float scale,
                                  float scale_log2, bool vec) {
    using D = Dims<HS>;
    TRAINRIG_DYNAMIC_SHARED(unsigned char, smem);
    const Carve<HS> sm(smem, D::kBwdWarpF);
    float* sF = sm.f;
    bf16 *sK = sm.tile(0), *sV = sm.tile(1), *sQ = sm.tile(2), *sdO = sm.tile(3);
    bf16* sPT = sm.tile(4);                                  // Pᵀ, then dSᵀ in the same place
    float* sL = reinterpret_cast<float*>(sPT + D::kPElems);  // lse·log2(e) per query
    float* sD = sL + kTile;                                  // D per query

    const Lane me;
    const KeyBlock<HS> at(qkv, T, NH, KVH, me);
    const int row = me.row, half = me.half, b = at.b, kt = at.kt, key = at.key, C = at.C;
    const int group = NH / KVH;  // query heads sharing this key/value head
    const int nt = static_cast<int>(gridDim.y);
    const size_t ld = at.ld;
    float* sS = sF + me.warp * D::kBwdWarpF;  // this warp's Sᵀ, then its dK and dV rows
    float* sdP = sS + D::kScoreF;
    bf16* sPTw = sPT + me.warp * kFrag * D::kLdP;
    const bf16* sKw = sK + me.warp * kFrag * D::kLdH;
    const bf16* sVw = sV + me.warp * kFrag * D::kLdH;

    load_tile<HS>(sK, at.k, ld, at.k0, T, vec);  // published by the first barrier in the loop
    load_tile<HS>(sV, at.v, ld, at.k0, T, vec);

    FragAcc dk[HS / kFrag], dv[HS / kFrag];
#pragma unroll
    for (int j = 0; j < HS / kFrag; ++j) {
        wmma::fill_fragment(dk[j], 0.f);
        wmma::fill_fragment(dv[j], 0.f);
    }

    // The group's query heads in order, each over its query tiles (one flat loop, which keeps
    // fewer registers live than two nested ones); tiles before kt only hold queries earlier than
    // every key here: all masked.
    const int span = nt - kt;
    for (int it = 0; it < group * span; ++it) {
        const int h = at.g * group + it / span;
        const int q0 = (kt + it % span) * kTile;
        const size_t hoff = static_cast<size_t>(h) * HS;
        const size_t bh = static_cast<size_t>(b) * NH + h;
        __syncthreads();  // every warp is done with the previous Q, dO, lse and D
        load_tile<HS>(sQ, at.base + hoff, ld, q0, T, vec);
        load_tile<HS>(sdO, dout + static_cast<size_t>(b) * T * C + hoff, C, q0, T, vec);
        for (int i = threadIdx.x; i < kTile; i += kThreads) {
            const bool in = q0 + i < T;
            sL[i] = in ? lse[bh * T + q0 + i] * kLog2e : 0.f;
            sD[i] = in ? dsum[bh * T + q0 + i] : 0.f;
        }
        __syncthreads();

        score_tile<HS>(sS, sKw, sQ);    // Sᵀ = K·Qᵀ
        score_tile<HS>(sdP, sVw, sdO);  // dPᵀ = V·dOᵀ
        __syncwarp();

        // Row `row` of this warp's tiles is key `key`, column col is query q0 + col; visible
        // when the query is a real row at or after the key. Masked entries are exact zeros.
        // Pᵀ and then dSᵀ pass through the warp's one bf16 tile on their way into fragments:
        // dV takes Pᵀ, then dK takes dSᵀ, so one tile per warp (111.5 KiB a block at HS = 128:
        // two blocks fit an H100's SM, 228 KiB with 1 KiB reserved per block, CUDA C Programming
        // Guide, "Compute Capabilities") and one set of operand fragments live at a time.
#pragma unroll  // `pass` a constant: the fragments stay in registers
        for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
            for (int c = 0; c < kTile / 2; ++c) {
                const int col = 2 * c + half;
                const int i = q0 + col;
                float x = 0.f;
                if (i >= key && i < T) {
                    x = exp2f(sS[row * D::kLdS + col] * scale_log2 - sL[col]);  // p
                    if (pass == 1) x *= sdP[row * D::kLdS + col] - sD[col];     // ds
                }
                sPTw[row * D::kLdP + col] = __float2bfloat16(x);
            }
            __syncwarp();
            FragA a[kTile / kFrag];
            row_fragments<HS>(a, sPTw);
            __syncwarp();  // every lane has its fragments before the tile is written again
            const bf16* rhs = pass == 0 ? sdO : sQ;  // dV += Pᵀ·dO, dK += dSᵀ·Q
#pragma unroll
            for (int j = 0; j < HS / kFrag; ++j) {
#pragma unroll
                for (int kk = 0; kk < kTile / kFrag; ++kk) {
                    FragBRow fb;
                    wmma::load_matrix_sync(fb, rhs + kk * kFrag * D::kLdH + j * kFrag, D::kLdH);
                    wmma::mma_sync(pass == 0 ? dv[j] : dk[j], a[kk], fb, pass == 0 ? dv[j] : dk[j]);
                }
            }
        }
    }

    // kt < nt and group ≥ 1, so the loop ran and its last __syncwarp ordered the reads of Sᵀ and
    // dPᵀ before these stores.
    bf16* dst = dqkv + static_cast<size_t>(b) * T * ld;
    store_gradient<HS>(dk, scale, sS, dst + at.koff + at.kv, ld, me.first(at.k0), T, me.lane, vec);
    __syncwarp();  // the dK rows are read before dV overwrites them
    store_gradient<HS>(dv, 1.f, sS, dst + at.voff + at.kv, ld, me.first(at.k0), T, me.lane, vec);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

float scale_of(int hs) { return 1.f / std::sqrt(static_cast<float>(hs)); }

template <int HS>
void forward_impl(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH,
                  cudaStream_t stream) {
    constexpr size_t smem = Dims<HS>::kFwdSmem;
    const dim3 grid(static_cast<unsigned>(B * NH), static_cast<unsigned>((T + kTile - 1) / kTile));
    const bool vec = aligned16(out) && aligned16(qkv);
    trainrig::cuda::launch(attention_forward_kernel<HS>, {grid, kThreads, smem, stream}, out, lse,
                           qkv, T, NH, KVH, scale_of(HS) * kLog2e, vec);
}

template <int HS>
void backward_impl(bf16* dqkv, const bf16* dout, const bf16* qkv, const bf16* out, const float* lse,
                   float* dsum, int B, int T, int NH, int KVH, cudaStream_t stream) {
    constexpr size_t dq_smem = Dims<HS>::kDqSmem, dkv_smem = Dims<HS>::kDkvSmem;
    const unsigned tiles = static_cast<unsigned>((T + kTile - 1) / kTile);
    const dim3 q_grid(static_cast<unsigned>(B * NH), tiles);
    const dim3 kv_grid(static_cast<unsigned>(B * KVH), tiles);
    const bool vec = aligned16(dqkv) && aligned16(dout) && aligned16(qkv) && aligned16(out);
    const float scale = scale_of(HS);
    // The dQ kernel also writes D, which the dK/dV kernel after it on the stream reads.
    trainrig::cuda::launch(attention_backward_dq_kernel<HS>, {q_grid, kThreads, dq_smem, stream},
                           dqkv, dsum, dout, qkv, out, lse, T, NH, KVH, scale, scale * kLog2e, vec);
    trainrig::cuda::launch(attention_backward_dkv_kernel<HS>, {kv_grid, kThreads, dkv_smem, stream},
                           dqkv, dsum, dout, qkv, lse, T, NH, KVH, scale, scale * kLog2e, vec);
}

// The shapes the launchers accept; anything else is refused by GptCuda::create first.
bool valid_shape(int B, int T, int NH, int KVH) {
    return B > 0 && T > 0 && NH > 0 && KVH > 0 && NH % KVH == 0;
}

// Each kernel needs more than the default 48 KiB of dynamic shared memory at some head size, so
// every limit is raised (a no-op where it is not needed).
template <class Kernel>
KernelSetupError raise_smem(Kernel* kernel, const char* name, size_t bytes) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(bytes));
    return {e, e == cudaSuccess ? "" : name, bytes};
}

template <int HS>
KernelSetupError configure_impl() {
    using D = Dims<HS>;
    KernelSetupError r =
        raise_smem(attention_forward_kernel<HS>, "attention_forward_kernel", D::kFwdSmem);
    if (r.error == cudaSuccess)
        r = raise_smem(attention_backward_dq_kernel<HS>, "attention_backward_dq_kernel",
                       D::kDqSmem);
    if (r.error == cudaSuccess)
        r = raise_smem(attention_backward_dkv_kernel<HS>, "attention_backward_dkv_kernel",
                       D::kDkvSmem);
    return r;
}

// The head sizes of the switches below.
static_assert(AttentionSmem::kHeadSizes.size() == 4 && AttentionSmem::kHeadSizes[0] == 16 &&
                  AttentionSmem::kHeadSizes[1] == 32 && AttentionSmem::kHeadSizes[2] == 64 &&
                  AttentionSmem::kHeadSizes[3] == 128,
              "a head size in train/attention_smem.h needs its case in every switch here");

}  // namespace

KernelSetupError attention_configure(int hs) {
    switch (hs) {
        case 16:
            return configure_impl<16>();
        case 32:
            return configure_impl<32>();
        case 64:
            return configure_impl<64>();
        case 128:
            return configure_impl<128>();
        default:
            return {cudaErrorInvalidValue, "attention kernels (no build for this head size)", 0};
    }
}

bool attention_supports_head_dim(int hs) {
    for (int h : AttentionSmem::kHeadSizes)
        if (h == hs) return true;
    return false;
}

void attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH,
                       int hs, cudaStream_t stream) {
    if (!valid_shape(B, T, NH, KVH)) return;
    switch (hs) {
        case 16:
            return forward_impl<16>(out, lse, qkv, B, T, NH, KVH, stream);
        case 32:
            return forward_impl<32>(out, lse, qkv, B, T, NH, KVH, stream);
        case 64:
            return forward_impl<64>(out, lse, qkv, B, T, NH, KVH, stream);
        case 128:
            return forward_impl<128>(out, lse, qkv, B, T, NH, KVH, stream);
        default:
            return;  // callers check attention_supports_head_dim first
    }
}

// D, one fp32 per (batch, query head, query): what the dK/dV kernel needs from the dQ kernel.
size_t attention_backward_scratch_bytes(int B, int T, int NH) {
    if (B <= 0 || T <= 0 || NH <= 0) return 0;
    return static_cast<size_t>(B) * NH * T * sizeof(float);
}

void attention_backward(bf16* dqkv, const bf16* dout, const bf16* qkv, const bf16* out,
                        const float* lse, void* scratch, int B, int T, int NH, int KVH, int hs,
                        cudaStream_t stream) {
    if (!valid_shape(B, T, NH, KVH)) return;
    float* dsum = static_cast<float*>(scratch);
    switch (hs) {
        case 16:
            return backward_impl<16>(dqkv, dout, qkv, out, lse, dsum, B, T, NH, KVH, stream);
        case 32:
            return backward_impl<32>(dqkv, dout, qkv, out, lse, dsum, B, T, NH, KVH, stream);
        case 64:
            return backward_impl<64>(dqkv, dout, qkv, out, lse, dsum, B, T, NH, KVH, stream);
        case 128:
            return backward_impl<128>(dqkv, dout, qkv, out, lse, dsum, B, T, NH, KVH, stream);
        default:
            return;
    }
}

}  // namespace trainrig::train::cuda

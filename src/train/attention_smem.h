// The shared memory the CUDA attention kernels (src/train/cuda/attention.cu) take per block, by
// head size: the one definition that their launches and the device check before them
// (train/device_fit.h) both read. Plain C++17, so that CPU code and its tests include it too.
//
// A block holds a 64-query (or 64-key) tile and has 4 warps, warp w owning rows 16w..16w+15.
// Row strides are padded (bf16 by 8 elements, fp32 by 4) so that consecutive rows start on
// different banks. Per block, in this order:
//   forward: per-warp fp32 scores / P·V rows, then the Q, K and V tiles and the P tile (bf16)
//   dQ:      per-warp fp32 S and dP side by side / dQ rows, then Q, dO, K and V, and the dS tile
//   dK/dV:   per-warp fp32 Sᵀ and dPᵀ / dK and dV rows, then K, V, Q and dO, one tile that
//            holds Pᵀ and then dSᵀ, and lse and D for the 64 queries of the tile (fp32)
// At head size 128: forward 95232 bytes (93 KiB), dQ 113664 (111 KiB), dK/dV 114176 (111.5 KiB).
#pragma once

#include <array>
#include <cstddef>

namespace trainrig::train {

struct AttentionSmem {
    static constexpr int kTile = 64;  // queries and keys per tile
    static constexpr int kWarps = 4;
    static constexpr int kFrag = 16;  // wmma M = N = K
    static constexpr size_t kBf16 = 2, kF32 = 4;
    // The head sizes the kernels are compiled for, smallest first.
    static constexpr std::array<int, 4> kHeadSizes = {16, 32, 64, 128};

    int hs = 0;

    constexpr int ld_h() const { return hs + 8; }     // bf16 stride of the Q, K, V, dO tiles
    constexpr int ld_p() const { return kTile + 8; }  // bf16 stride of the P and dS tiles
    constexpr int ld_s() const { return kTile + 4; }  // fp32 stride of score tiles
    constexpr int ld_o() const { return hs + 4; }     // fp32 stride of hs-wide result rows
    constexpr int tile_elems() const { return kTile * ld_h(); }
    constexpr int p_elems() const { return kTile * ld_p(); }
    constexpr int score_f() const { return kFrag * ld_s(); }  // a warp's 16×64 scores
    constexpr int rows_f() const { return kFrag * ld_o(); }   // a warp's 16×hs result rows
    // A warp's fp32 region. Forward: S, then the P·V product in the same place. Backward: S and
    // dP side by side, then the final gradient rows.
    constexpr int fwd_warp_f() const { return larger(score_f(), rows_f()); }
    constexpr int bwd_warp_f() const { return larger(2 * score_f(), rows_f()); }

    constexpr size_t forward_bytes() const {
        return kWarps * fwd_warp_f() * kF32 + (3 * tile_elems() + p_elems()) * kBf16;
    }
    constexpr size_t dq_bytes() const {
        return kWarps * bwd_warp_f() * kF32 + (4 * tile_elems() + p_elems()) * kBf16;
    }
    constexpr size_t dkv_bytes() const {
        return kWarps * bwd_warp_f() * kF32 + (4 * tile_elems() + p_elems()) * kBf16 +
               2 * kTile * kF32;
    }
    // What a training step needs: the largest of the three kernels.
    constexpr size_t training_bytes() const {
        return larger(forward_bytes(), larger(dq_bytes(), dkv_bytes()));
    }

private:
    template <class T>
    static constexpr T larger(T a, T b) {
        return a > b ? a : b;
    }
};

static_assert(AttentionSmem{128}.dq_bytes() == 113664 && AttentionSmem{128}.dkv_bytes() == 114176,
              "the head-size-128 figures of the comment above");

}  // namespace trainrig::train

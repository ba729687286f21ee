// The warp-level intrinsics for device code compiled by the host compiler: each is a
// warp-collective operation (exec/block_run.h) that waits for every lane its mask names, as the
// CUDA C++ Programming Guide's "Warp Shuffle Functions" and "Warp Vote Functions" require
// ("threads in mask must all execute the same intrinsic with the same mask").
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "exec/block_run.h"

namespace trainrig::emu {

enum WarpKind : int { kSyncWarp = 1, kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAll, kAny };

void resolve_shuffle(WarpOp* const lanes[32], unsigned mask);
void resolve_vote(WarpOp* const lanes[32], unsigned mask);

template <class T>
T shuffle(WarpKind kind, unsigned mask, T var, int arg, int width) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "a shuffled value is at most 8 bytes, as on a GPU");
    WarpOp op;
    op.kind = kind;
    op.mask = mask;
    std::memcpy(&op.in, &var, sizeof var);
    op.arg = arg;
    op.width = width;
    this_block().warp_collective(op, resolve_shuffle);
    T out;
    std::memcpy(&out, &op.out, sizeof out);
    return out;
}

inline unsigned vote(WarpKind kind, unsigned mask, int predicate) {
    WarpOp op;
    op.kind = kind;
    op.mask = mask;
    op.in = predicate != 0;
    this_block().warp_collective(op, resolve_vote);
    return static_cast<unsigned>(op.out);
}

}  // namespace trainrig::emu

inline void __syncwarp(unsigned mask = 0xffffffffu) {
    trainrig::emu::WarpOp op;
    op.kind = trainrig::emu::kSyncWarp;
    op.mask = mask;
    trainrig::emu::this_block().warp_collective(op, [](trainrig::emu::WarpOp* const*, unsigned) {});
}

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
    return trainrig::emu::shuffle(trainrig::emu::kShflIdx, mask, var, src_lane, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return trainrig::emu::shuffle(trainrig::emu::kShflUp, mask, var, static_cast<int>(delta),
                                  width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return trainrig::emu::shuffle(trainrig::emu::kShflDown, mask, var, static_cast<int>(delta),
                                  width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
    return trainrig::emu::shuffle(trainrig::emu::kShflXor, mask, var, lane_mask, width);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
    return trainrig::emu::vote(trainrig::emu::kBallot, mask, predicate);
}
inline int __all_sync(unsigned mask, int predicate) {
    return static_cast<int>(trainrig::emu::vote(trainrig::emu::kAll, mask, predicate));
}
inline int __any_sync(unsigned mask, int predicate) {
    return static_cast<int>(trainrig::emu::vote(trainrig::emu::kAny, mask, predicate));
}

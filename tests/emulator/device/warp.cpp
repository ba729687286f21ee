// Shuffle and vote results as the CUDA C++ Programming Guide defines them: lanes are grouped in
// sub-sections of `width`; a source lane outside the caller's sub-section (shfl_up/down) keeps
// the caller's own value; xor and idx wrap within the sub-section.
#include "device/warp.h"

#include <fmt/format.h>

namespace trainrig::emu {

void resolve_shuffle(WarpOp* const lanes[32], unsigned mask) {
    for (int l = 0; l < 32; ++l) {
        WarpOp* me = lanes[l];
        if (me == nullptr) continue;
        const int width = me->width;
        if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
            this_block().trap(
                fmt::format("shuffle width {} is not a power of two up to 32", width));
        const int first = l & ~(width - 1);
        int src = l;
        switch (me->kind) {
            case kShflIdx:
                src = first + (me->arg & (width - 1));
                break;
            case kShflUp:
                src = l - me->arg >= first ? l - me->arg : l;
                break;
            case kShflDown:
                src = l + me->arg < first + width ? l + me->arg : l;
                break;
            case kShflXor:
                src = l ^ me->arg;
                if (src >= first + width) src = l;  // outside the sub-section: its own value
                break;
            default:
                break;
        }
        // Reading a lane the mask leaves out is undefined on a GPU; here it is a fault.
        if ((mask >> src & 1u) == 0)
            this_block().trap(
                fmt::format("lane {} reads lane {} in a shuffle whose mask {:#010x} leaves it out",
                            l, src, mask));
        me->out = lanes[src]->in;
    }
}

void resolve_vote(WarpOp* const lanes[32], unsigned mask) {
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l)
        if (lanes[l] != nullptr && lanes[l]->in != 0) ballot |= 1u << l;
    for (int l = 0; l < 32; ++l) {
        WarpOp* me = lanes[l];
        if (me == nullptr) continue;
        if (me->kind == kBallot) me->out = ballot;
        if (me->kind == kAll) me->out = ballot == mask;
        if (me->kind == kAny) me->out = ballot != 0;
    }
}

}  // namespace trainrig::emu

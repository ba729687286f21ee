#include "device/wmma.h"

#include <fmt/format.h>

namespace trainrig::emu {

void check_wmma_memory(WarpOp* const lanes[32], const char* what, size_t element_bytes) {
    const WarpOp& first = *lanes[0];
    for (int l = 1; l < 32; ++l)
        if (lanes[l]->ptr[1] != first.ptr[1] || lanes[l]->ld != first.ld ||
            lanes[l]->layout != first.layout)
            this_block().trap(fmt::format(
                "{}: lanes 0 and {} of a warp pass different pointers, strides or layouts", what,
                l));
    if (reinterpret_cast<uintptr_t>(first.ptr[1]) % 32 != 0)
        this_block().trap(fmt::format("{}: pointer {} is not 256-bit aligned", what, first.ptr[1]));
    if (first.ld * element_bytes % 16 != 0 || first.ld < 16)
        this_block().trap(fmt::format(
            "{}: stride {} elements of {} bytes is not a multiple of 16 bytes of at least a row",
            what, first.ld, element_bytes));
}

}  // namespace trainrig::emu

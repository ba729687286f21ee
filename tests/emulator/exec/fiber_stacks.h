// Stacks for the fibers that play a block's GPU threads: mapped once per host thread and reused
// by every block it runs, each with a PROT_NONE guard page below it, so a kernel whose locals
// overflow its stack faults at once instead of writing over its neighbour's.
#pragma once

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

namespace trainrig::emu {

class FiberStacks {
public:
    // 256 KiB: a kernel thread's registers and local arrays are a few KiB; AddressSanitizer's
    // redzones and fake frames multiply that.
    static constexpr size_t kStackBytes = 256 * 1024;

    FiberStacks() = default;
    FiberStacks(const FiberStacks&) = delete;
    FiberStacks& operator=(const FiberStacks&) = delete;
    ~FiberStacks();

    // Boost.Context's StackAllocator concept (through a small adaptor that holds the pool).
    boost::context::stack_context allocate();
    void deallocate(boost::context::stack_context& sc) noexcept;

    // The stacks of this host thread, made on first use.
    static FiberStacks& here();

private:
    std::vector<void*> free_;  // the top of each free stack
    std::vector<void*> maps_;  // every mapping, to unmap
};

}  // namespace trainrig::emu

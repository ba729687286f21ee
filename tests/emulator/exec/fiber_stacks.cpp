#include "exec/fiber_stacks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace trainrig::emu {
namespace {

size_t page_size() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

}  // namespace

FiberStacks::~FiberStacks() {
    for (void* m : maps_) ::munmap(m, kStackBytes + page_size());
}

boost::context::stack_context FiberStacks::allocate() {
    if (free_.empty()) {
        const size_t page = page_size();
        void* m = ::mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) throw std::bad_alloc();
        ::mprotect(m, page, PROT_NONE);  // the guard below the stack (stacks grow down)
        maps_.push_back(m);
        free_.push_back(static_cast<char*>(m) + page + kStackBytes);
    }
    boost::context::stack_context sc;
    sc.sp = free_.back();
    sc.size = kStackBytes;
    free_.pop_back();
    return sc;
}

void FiberStacks::deallocate(boost::context::stack_context& sc) noexcept { free_.push_back(sc.sp); }

FiberStacks& FiberStacks::here() {
    thread_local FiberStacks stacks;
    return stacks;
}

}  // namespace trainrig::emu

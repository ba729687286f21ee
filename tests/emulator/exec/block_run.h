// One thread block of an emulated kernel launch: its GPU threads are fibers on one host thread,
// each run until it blocks (at __syncthreads, at a warp-collective operation, or at its end),
// in an order the schedule chooses. A barrier is released by the last thread to reach it, so
// between two barriers the threads run one after the other, whole (and with warp_ahead each
// warp runs past its warp operations before the next warp starts): an order-dependent kernel
// gives different results under two schedules (Schedule below), which is how a missing
// __syncthreads is found.
#pragma once

#include <vector_types.h>

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace trainrig::emu {

// What one lane brings to a warp-collective operation (a shuffle, a vote, __syncwarp, a wmma
// load, product or store): the operation's kind and mask, which every lane named in the mask
// must give alike, its value and argument, and for wmma the lane's fragment pointers.
struct WarpOp {
    int kind = 0;
    unsigned mask = 0;
    uint64_t in = 0;   // the lane's value, as bits
    uint64_t out = 0;  // its result, written by the resolver
    int arg = 0;       // source lane, lane mask or delta
    int width = 32;
    const void* ptr[4] = {};
    size_t ld = 0;
    int layout = 0;
};

class BlockRun;
// Computes every lane's result once all the lanes in the mask have arrived; lanes[l] is null for
// a lane outside the mask.
using WarpResolver = void (*)(WarpOp* const lanes[32], unsigned mask);

// The order threads are resumed in between barriers, and blocks are run in.
struct Schedule {
    enum Order { kForward, kReverse, kShuffled };
    Order order = kForward;
    uint64_t seed = 0;  // for kShuffled
    // Each warp, in the order's turn, runs as far as it can before the next starts: past its
    // warp-collective operations, up to a __syncthreads or its end. A GPU may run one warp that
    // far ahead of the others, so a kernel that reads another warp's shared-memory writes with
    // only warp-level synchronisation between (a missing __syncthreads before a wmma load)
    // sees them in one order and not in the other. Without it, every thread stops at its
    // first warp operation until all threads have had their turn, which hides such a race.
    bool warp_ahead = false;
};

struct EmuThread;

class BlockRun {
public:
    BlockRun(dim3 grid, dim3 block, size_t dynamic_shared_bytes, const Schedule& schedule);
    ~BlockRun();
    BlockRun(const BlockRun&) = delete;
    BlockRun& operator=(const BlockRun&) = delete;

    // Runs block `index` with every thread calling body(); empty when it ended, else what
    // faulted, in one sentence. May be called again for another block index.
    std::string run(uint3 index, const std::function<void()>& body);

    // Device-side, from the current thread.
    void sync_threads(const char* file, int line);
    void warp_collective(WarpOp& op, WarpResolver resolve);
    [[noreturn]] void trap(const std::string& why);
    void* dynamic_shared() { return dynamic_shared_.get(); }
    static constexpr size_t kSharedAlign = 128;
    const uint3& block_index() const { return index_; }
    const dim3& block_dim() const { return block_; }
    const dim3& grid_dim() const { return grid_; }

private:
    void resume(EmuThread& t);
    // Resumes the runnable threads of `lanes` (one warp, in the schedule's order) until none
    // of them can run; false when none could.
    bool run_warp_ahead(const std::vector<unsigned>& lanes);
    void yield(EmuThread& t);
    void thread_exits(EmuThread& t);
    void release_barrier_if_complete();
    std::string describe_deadlock() const;

    dim3 grid_, block_;
    uint3 index_{};
    size_t dynamic_bytes_;
    struct FreeShared {
        void operator()(unsigned char* p) const {
            ::operator delete[](p, std::align_val_t(kSharedAlign));
        }
    };
    std::unique_ptr<unsigned char[], FreeShared> dynamic_shared_;
    std::vector<unsigned> order_;
    bool warp_ahead_;
    std::vector<std::vector<unsigned>> warps_;  // order_ grouped by warp, in order_'s order
    std::vector<std::unique_ptr<EmuThread>> threads_;
    unsigned live_ = 0;        // threads that have not returned
    unsigned at_barrier_ = 0;  // threads waiting at __syncthreads
    std::string fault_;
};

// The thread and block the calling fiber plays; only valid inside a kernel.
const uint3& thread_index();
BlockRun& this_block();
unsigned lane_id();

// Thrown inside a fiber to end the kernel with a fault.
struct KernelTrap {
    std::string why;
};

}  // namespace trainrig::emu

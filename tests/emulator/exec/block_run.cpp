#include "exec/block_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <numeric>
#include <random>
#include <utility>

#include "exec/fiber_stacks.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define TRAINRIG_EMU_ASAN 1
#endif

namespace trainrig::emu {

namespace ctx = boost::context;

struct EmuThread {
    enum Wait { kRunnable, kBlockBarrier, kWarpOp, kDone };
    uint3 index{};
    unsigned linear = 0;
    Wait wait = kRunnable;
    const char* file = "";  // where it waits at __syncthreads
    int line = 0;
    WarpOp* op = nullptr;
    ctx::fiber fiber;  // its context while suspended
    ctx::fiber back;   // the runner's context while it runs
    // AddressSanitizer must be told each switch of stacks (sanitizer/common_interface_defs.h).
    void* fake_stack = nullptr;
    const void* back_bottom = nullptr;
    size_t back_size = 0;
    const void* stack_bottom = nullptr;
    size_t stack_size = 0;
};

namespace {

thread_local BlockRun* tl_block = nullptr;
thread_local EmuThread* tl_thread = nullptr;

void start_switch([[maybe_unused]] void** fake, [[maybe_unused]] const void* bottom,
                  [[maybe_unused]] size_t size) {
#ifdef TRAINRIG_EMU_ASAN
    __sanitizer_start_switch_fiber(fake, bottom, size);
#endif
}

void finish_switch([[maybe_unused]] void* fake, [[maybe_unused]] const void** bottom,
                   [[maybe_unused]] size_t* size) {
#ifdef TRAINRIG_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, bottom, size);
#endif
}

// A pooled stack that tells its thread where it lies, for the sanitizer.
struct ThreadStack {
    FiberStacks* pool;
    EmuThread* thread;
    ctx::stack_context allocate() {
        ctx::stack_context sc = pool->allocate();
        thread->stack_bottom = static_cast<char*>(sc.sp) - sc.size;
        thread->stack_size = sc.size;
        return sc;
    }
    void deallocate(ctx::stack_context& sc) noexcept { pool->deallocate(sc); }
};

std::vector<unsigned> schedule_order(unsigned n, const Schedule& s) {
    std::vector<unsigned> order(n);
    std::iota(order.begin(), order.end(), 0u);
    if (s.order == Schedule::kReverse) std::reverse(order.begin(), order.end());
    if (s.order == Schedule::kShuffled) {
        std::mt19937_64 gen(s.seed);
        std::shuffle(order.begin(), order.end(), gen);
    }
    return order;
}

}  // namespace

BlockRun::BlockRun(dim3 grid, dim3 block, size_t dynamic_shared_bytes, const Schedule& schedule)
    : grid_(grid),
      block_(block),
      dynamic_bytes_(dynamic_shared_bytes),
      // Exactly the bytes asked for, so that AddressSanitizer reports an access past them.
      dynamic_shared_(static_cast<unsigned char*>(
          ::operator new[](dynamic_shared_bytes, std::align_val_t(kSharedAlign)))),
      order_(schedule_order(block.x * block.y * block.z, schedule)),
      warp_ahead_(schedule.warp_ahead) {
    const unsigned n = block.x * block.y * block.z;
    std::vector<int> slot((n + 31) / 32, -1);
    for (const unsigned i : order_) {
        int& w = slot[i / 32];
        if (w < 0) {
            w = static_cast<int>(warps_.size());
            warps_.emplace_back();
        }
        warps_[static_cast<size_t>(w)].push_back(i);
    }
    for (unsigned i = 0; i < n; ++i) {
        auto t = std::make_unique<EmuThread>();
        t->linear = i;
        t->index = uint3{i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
        threads_.push_back(std::move(t));
    }
}

BlockRun::~BlockRun() = default;

std::string BlockRun::run(uint3 index, const std::function<void()>& body) {
    index_ = index;
    fault_.clear();
    live_ = static_cast<unsigned>(threads_.size());
    at_barrier_ = 0;
    FiberStacks& stacks = FiberStacks::here();
    for (auto& tp : threads_) {
        EmuThread& t = *tp;
        t.wait = EmuThread::kRunnable;
        t.op = nullptr;
        t.fiber = ctx::fiber(std::allocator_arg, ThreadStack{&stacks, &t},
                             [this, &t, &body](ctx::fiber&& back) {
                                 t.back = std::move(back);
                                 finish_switch(nullptr, &t.back_bottom, &t.back_size);
                                 try {
                                     if (fault_.empty()) body();  // else: only to end cleanly
                                 } catch (const KernelTrap& trap) {
                                     if (fault_.empty()) fault_ = trap.why;
                                 } catch (const std::exception& e) {
                                     if (fault_.empty()) fault_ = e.what();
                                 }
                                 thread_exits(t);
                                 start_switch(nullptr, t.back_bottom, t.back_size);
                                 return std::move(t.back);
                             });
    }
    BlockRun* const outer_block = tl_block;
    EmuThread* const outer_thread = tl_thread;
    tl_block = this;
    while (fault_.empty() && live_ > 0) {
        bool ran = false;
        if (warp_ahead_) {
            for (const auto& lanes : warps_) {
                ran = run_warp_ahead(lanes) || ran;
                if (!fault_.empty()) break;
            }
        } else {
            for (const unsigned i : order_) {
                EmuThread& t = *threads_[i];
                if (t.wait != EmuThread::kRunnable) continue;
                resume(t);
                ran = true;
                if (!fault_.empty()) break;
            }
        }
        if (!ran && fault_.empty() && live_ > 0) fault_ = describe_deadlock();
    }
    // Threads a fault left suspended, or never started, are run to their end: each resumes where
    // it waits, finds the fault and leaves by a KernelTrap on its own stack (one never started
    // leaves at once). Destroying a suspended fiber instead would unwind it through stack
    // switches AddressSanitizer is not told of, which it then misreads as stack errors.
    for (auto& t : threads_) {
        if (t->fiber) resume(*t);
        t->fiber = {};
    }
    tl_block = outer_block;
    tl_thread = outer_thread;
    return fault_;
}

void BlockRun::resume(EmuThread& t) {
    tl_thread = &t;
    void* fake = nullptr;
    start_switch(&fake, t.stack_bottom, t.stack_size);
    t.fiber = std::move(t.fiber).resume();
    finish_switch(fake, nullptr, nullptr);
    tl_thread = nullptr;
}

bool BlockRun::run_warp_ahead(const std::vector<unsigned>& lanes) {
    bool any = false;
    for (bool progressed = true; progressed && fault_.empty();) {
        progressed = false;
        for (const unsigned i : lanes) {
            EmuThread& t = *threads_[i];
            if (t.wait != EmuThread::kRunnable) continue;
            resume(t);
            any = progressed = true;
            if (!fault_.empty()) break;
        }
    }
    return any;
}

void BlockRun::yield(EmuThread& t) {
    start_switch(&t.fake_stack, t.back_bottom, t.back_size);
    t.back = std::move(t.back).resume();
    finish_switch(t.fake_stack, &t.back_bottom, &t.back_size);
}

void BlockRun::thread_exits(EmuThread& t) {
    t.wait = EmuThread::kDone;
    --live_;
    release_barrier_if_complete();
}

void BlockRun::sync_threads(const char* file, int line) {
    EmuThread& t = *tl_thread;
    t.wait = EmuThread::kBlockBarrier;
    t.file = file;
    t.line = line;
    ++at_barrier_;
    release_barrier_if_complete();
    if (t.wait != EmuThread::kRunnable) yield(t);
    if (!fault_.empty()) throw KernelTrap{fault_};
}

// The last of the live threads to arrive releases them all; they must all have arrived at one
// __syncthreads (a barrier in code that only some threads reach is undefined on a GPU).
void BlockRun::release_barrier_if_complete() {
    if (at_barrier_ == 0 || at_barrier_ != live_) return;
    const EmuThread* first = nullptr;
    for (auto& t : threads_) {
        if (t->wait != EmuThread::kBlockBarrier) continue;
        if (first == nullptr) first = t.get();
        if (t->line != first->line || std::string_view(t->file) != first->file) {
            if (fault_.empty())
                fault_ = fmt::format(
                    "threads met at different __syncthreads: thread {} at {}:{}, thread {} at "
                    "{}:{}",
                    first->linear, first->file, first->line, t->linear, t->file, t->line);
            return;
        }
    }
    for (auto& t : threads_)
        if (t->wait == EmuThread::kBlockBarrier) t->wait = EmuThread::kRunnable;
    at_barrier_ = 0;
}

void BlockRun::warp_collective(WarpOp& op, WarpResolver resolve) {
    EmuThread& me = *tl_thread;
    const unsigned lane = me.linear % 32;
    const unsigned base = me.linear - lane;
    const unsigned lanes = std::min<unsigned>(32, static_cast<unsigned>(threads_.size()) - base);
    if ((op.mask >> lane & 1u) == 0)
        trap(fmt::format("thread {} calls a warp operation with mask {:#010x}, which leaves it out",
                         me.linear, op.mask));
    if (lanes < 32 && (op.mask >> lanes) != 0)
        trap(fmt::format("mask {:#010x} names lanes past the {} this block's last warp has",
                         op.mask, lanes));
    me.op = &op;
    me.wait = EmuThread::kWarpOp;
    WarpOp* all[32] = {};
    for (unsigned l = 0; l < 32; ++l) {
        if ((op.mask >> l & 1u) == 0) continue;
        EmuThread& t = *threads_[base + l];
        if (t.wait == EmuThread::kDone)
            trap(fmt::format("thread {} waits in a warp operation for lane {}, which has exited",
                             me.linear, l));
        if (t.wait != EmuThread::kWarpOp) {  // the last lane to arrive resolves it
            yield(me);
            if (!fault_.empty()) throw KernelTrap{fault_};
            return;
        }
        if (t.op->kind != op.kind || t.op->mask != op.mask)
            trap(
                fmt::format("lanes {} and {} of a warp are in different warp operations "
                            "(kind {} mask {:#010x}, kind {} mask {:#010x})",
                            lane, l, op.kind, op.mask, t.op->kind, t.op->mask));
        all[l] = t.op;
    }
    resolve(all, op.mask);
    for (unsigned l = 0; l < 32; ++l)
        if (op.mask >> l & 1u) {
            threads_[base + l]->wait = EmuThread::kRunnable;
            threads_[base + l]->op = nullptr;
        }
}

void BlockRun::trap(const std::string& why) {
    if (fault_.empty()) fault_ = why;
    throw KernelTrap{why};
}

std::string BlockRun::describe_deadlock() const {
    unsigned barrier = 0, warp = 0;
    const EmuThread* example = nullptr;
    for (const auto& t : threads_) {
        if (t->wait == EmuThread::kBlockBarrier) ++barrier;
        if (t->wait == EmuThread::kWarpOp) {
            ++warp;
            if (example == nullptr) example = t.get();
        }
    }
    if (example != nullptr)
        return fmt::format(
            "deadlock: {} threads wait at __syncthreads while {} wait in warp operations (thread "
            "{} with mask {:#010x}) for lanes that never arrive",
            barrier, warp, example->linear, example->op->mask);
    return fmt::format("deadlock: {} threads wait at __syncthreads that the others never reach",
                       barrier);
}

const uint3& thread_index() { return tl_thread->index; }
BlockRun& this_block() { return *tl_block; }
unsigned lane_id() { return tl_thread->linear % 32; }

}  // namespace trainrig::emu

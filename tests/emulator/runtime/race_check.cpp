#include "runtime/race_check.h"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "device/launch.h"
#include "runtime/emulator.h"

namespace trainrig::emu {
namespace {

std::atomic<bool> g_float_atomics{false};

using Copies = std::vector<std::vector<unsigned char>>;

Copies copy_out(const std::vector<Allocation>& allocs) {
    Copies out;
    for (const Allocation& a : allocs) {
        const auto* p = reinterpret_cast<const unsigned char*>(a.begin);
        out.emplace_back(p, p + a.size);
    }
    return out;
}

void copy_in(const std::vector<Allocation>& allocs, const Copies& c) {
    for (size_t i = 0; i < allocs.size(); ++i)
        std::memcpy(reinterpret_cast<void*>(allocs[i].begin), c[i].data(), c[i].size());
}

bool floats_close(const unsigned char* a, const unsigned char* b) {
    float x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    return std::fabs(x - y) <= kFloatAtomicTolerance * std::max(std::fabs(x), std::fabs(y));
}

}  // namespace

void note_float_atomic() { g_float_atomics.store(true, std::memory_order_relaxed); }

bool race_check_enabled() {
    const char* v = std::getenv("TRAINRIG_EMULATED_RACE_CHECK");
    return v != nullptr && std::string(v) == "1";
}

std::string run_grid_checked(const GridLaunch& launch) {
    if (!race_check_enabled()) return run_grid(launch, Schedule{}, false);
    static std::mutex one_at_a_time;  // the copies are of every device's memory
    std::lock_guard lock(one_at_a_time);
    const std::vector<Allocation> allocs = Emulator::get().device_allocations();
    const Copies before = copy_out(allocs);
    g_float_atomics = false;
    if (std::string fault = run_grid(launch, Schedule{Schedule::kForward, 0}, true); !fault.empty())
        return fault;
    const Copies forward = copy_out(allocs);
    copy_in(allocs, before);
    if (std::string fault = run_grid(launch, Schedule{Schedule::kReverse, 0}, true); !fault.empty())
        return fault;
    const bool tolerant = g_float_atomics.load();
    for (size_t i = 0; i < allocs.size(); ++i) {
        const auto* p = reinterpret_cast<const unsigned char*>(allocs[i].begin);
        for (size_t k = 0; k < forward[i].size(); ++k) {
            if (forward[i][k] == p[k]) continue;
            const size_t word = k / 4 * 4;
            if (tolerant && word + 4 <= forward[i].size() &&
                floats_close(forward[i].data() + word, p + word)) {
                k = word + 3;
                continue;
            }
            return fmt::format(
                "results depend on the order of the threads: byte {} of the {}-byte allocation "
                "at {:#x} on device {} is {:#04x} run forward and {:#04x} run backward{}; a "
                "__syncthreads or __syncwarp is missing, or threads write the same place",
                k, allocs[i].size, allocs[i].begin, allocs[i].device, forward[i][k], p[k],
                tolerant ? fmt::format(" (beyond the {} relative tolerance of a kernel that adds "
                                       "floats with atomics)",
                                       kFloatAtomicTolerance)
                         : "");
        }
    }
    return "";
}

}  // namespace trainrig::emu

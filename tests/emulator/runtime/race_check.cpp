#include "runtime/race_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
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

float word(const unsigned char* p) {
    float x;
    std::memcpy(&x, p, 4);
    return x;
}

// The root mean square of an allocation's finite fp32 words: the scale of its sums, for words
// near zero where a sum's cancellation makes a relative difference meaningless.
double rms(const std::vector<unsigned char>& bytes) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        const float x = word(bytes.data() + i);
        if (!std::isfinite(x)) continue;
        sum += double(x) * x;
        ++n;
    }
    return n == 0 ? 0 : std::sqrt(sum / static_cast<double>(n));
}

bool floats_close(float x, float y, double scale) {
    return std::fabs(double(x) - y) <=
           kFloatAtomicTolerance * std::max({double(std::fabs(x)), double(std::fabs(y)), scale});
}

// The variable's value: "" when the check is off.
std::string race_check_value() {
    const char* v = std::getenv("TRAINRIG_EMULATED_RACE_CHECK");
    return v == nullptr || std::string_view(v) == "0" ? "" : v;
}

bool race_check_applies(const char* site_file) {
    const std::string v = race_check_value();
    return v == "1" || (!v.empty() && std::string_view(site_file).find(v) != std::string::npos);
}

std::recursive_mutex& world() {
    static std::recursive_mutex mu;
    return mu;
}

}  // namespace

void note_float_atomic() { g_float_atomics.store(true, std::memory_order_relaxed); }

RaceCheckWorld::RaceCheckWorld() : held_(race_check_enabled()) {
    if (held_) world().lock();
}

RaceCheckWorld::~RaceCheckWorld() {
    if (held_) world().unlock();
}

bool race_check_enabled() { return !race_check_value().empty(); }

std::string run_grid_checked(const GridLaunch& launch, const char* site_file) {
    if (!race_check_applies(site_file)) return run_grid(launch, Schedule{}, false);
    const RaceCheckWorld alone;  // the copies are of every device's memory
    const std::vector<Allocation> allocs = Emulator::get().device_allocations();
    const Copies before = copy_out(allocs);
    g_float_atomics = false;
    if (std::string fault = run_grid(launch, Schedule{Schedule::kForward, 0, true}, true);
        !fault.empty())
        return fault;
    const Copies forward = copy_out(allocs);
    copy_in(allocs, before);
    if (std::string fault = run_grid(launch, Schedule{Schedule::kReverse, 0, true}, true);
        !fault.empty())
        return fault;
    const bool tolerant = g_float_atomics.load();
    for (size_t i = 0; i < allocs.size(); ++i) {
        const auto* p = reinterpret_cast<const unsigned char*>(allocs[i].begin);
        const double scale = tolerant ? rms(forward[i]) : 0;
        for (size_t k = 0; k < forward[i].size(); ++k) {
            if (forward[i][k] == p[k]) continue;
            const size_t at = k / 4 * 4;
            const bool whole_word = at + 4 <= forward[i].size();
            const float x = whole_word ? word(forward[i].data() + at) : 0;
            const float y = whole_word ? word(p + at) : 0;
            if (tolerant && whole_word && floats_close(x, y, scale)) {
                k = at + 3;
                continue;
            }
            return fmt::format(
                "results depend on the order of the threads: byte {} of the {}-byte allocation "
                "at {:#x} on device {} is {:#04x} run forward and {:#04x} run backward{}; a "
                "__syncthreads or __syncwarp is missing, or threads write the same place",
                k, allocs[i].size, allocs[i].begin, allocs[i].device, forward[i][k], p[k],
                tolerant ? fmt::format(" (as fp32 {} and {}, beyond the {} tolerance of a kernel "
                                       "that adds floats with atomics, relative to the larger of "
                                       "them and the allocation's RMS {})",
                                       x, y, kFloatAtomicTolerance, scale)
                         : "");
        }
    }
    return "";
}

}  // namespace trainrig::emu

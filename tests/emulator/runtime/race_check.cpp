#include "runtime/race_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <ranges>
#include <string_view>
#include <vector>

#include "device/launch.h"
#include "runtime/emulator.h"

namespace trainrig::emu {
namespace {

std::atomic<bool> g_float_atomics{false};

using Bytes = std::vector<unsigned char>;

// Copies of device memory, kept from one checked launch to the next (one at a time: the caller
// holds RaceCheckWorld), so that a launch copies into memory already mapped: fresh copies of
// every allocation cost more in page faults than the launches themselves. At exit the process
// says how many launches agreed in both orders, so a run can show that the check was on.
struct Scratch {
    std::vector<Bytes> before, forward;
    std::vector<bool> changed;
    size_t agreed = 0;
    ~Scratch() {
        std::fprintf(stderr,
                     "trainrig emulated GPU: race check: launches that agreed in both thread "
                     "orders: %zu\n",
                     agreed);
    }
};

Scratch& scratch() {
    static Scratch s;
    return s;
}

const unsigned char* bytes_of(const Allocation& a) {
    return reinterpret_cast<const unsigned char*>(a.begin);
}

void copy_out(const std::vector<Allocation>& allocs, std::vector<Bytes>& into) {
    into.resize(allocs.size());
    for (size_t i = 0; i < allocs.size(); ++i)
        into[i].assign(bytes_of(allocs[i]), bytes_of(allocs[i]) + allocs[i].size);
}

float word(const unsigned char* p) {
    float x;
    std::memcpy(&x, p, 4);
    return x;
}

// The root mean square of an allocation's finite fp32 words: the scale of its sums, for words
// near zero where a sum's cancellation makes a relative difference meaningless.
double rms(const Bytes& bytes) {
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

// "1": every launch; else a comma-separated list of texts, one of which the launch's source
// file's path contains.
bool race_check_applies(const char* site_file) {
    const std::string v = race_check_value();
    if (v == "1") return true;
    const std::string_view file(site_file);
    for (const auto part : std::views::split(std::string_view(v), ',')) {
        const std::string_view text(part.begin(), part.end());
        if (!text.empty() && file.find(text) != std::string_view::npos) return true;
    }
    return false;
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

namespace {

// Why the two runs' results differ in one allocation (`forward` against its memory now), or ""
// when they do not, or differ only as a kernel that adds floats with atomics may.
std::string compare_runs(const Allocation& a, const Bytes& forward, bool tolerant) {
    const unsigned char* p = bytes_of(a);
    if (std::memcmp(forward.data(), p, forward.size()) == 0) return "";
    const double scale = tolerant ? rms(forward) : 0;
    for (size_t k = 0; k < forward.size(); ++k) {
        if (forward[k] == p[k]) continue;
        const size_t at = k / 4 * 4;
        const bool whole_word = at + 4 <= forward.size();
        const float x = whole_word ? word(forward.data() + at) : 0;
        const float y = whole_word ? word(p + at) : 0;
        if (tolerant && whole_word && floats_close(x, y, scale)) {
            k = at + 3;
            continue;
        }
        return fmt::format(
            "results depend on the order of the threads: byte {} of the {}-byte allocation at "
            "{:#x} on device {} is {:#04x} run forward and {:#04x} run backward{}; a "
            "__syncthreads or __syncwarp is missing, or threads write the same place",
            k, a.size, a.begin, a.device, forward[k], p[k],
            tolerant ? fmt::format(" (as fp32 {} and {}, beyond the {} tolerance of a kernel that "
                                   "adds floats with atomics, relative to the larger of them and "
                                   "the allocation's RMS {})",
                                   x, y, kFloatAtomicTolerance, scale)
                     : "");
    }
    return "";
}

}  // namespace

std::string run_grid_checked(const GridLaunch& launch, const char* site_file) {
    if (!race_check_applies(site_file)) return run_grid(launch, Schedule{}, false);
    const RaceCheckWorld alone;  // the copies are of every device's memory
    const std::vector<Allocation> allocs = Emulator::get().device_allocations();
    Scratch& s = scratch();
    copy_out(allocs, s.before);
    g_float_atomics = false;
    if (std::string fault = run_grid(launch, Schedule{Schedule::kForward, 0, true}, true);
        !fault.empty())
        return fault;
    // What the forward run wrote is kept, and put back as it was; an allocation it left alone
    // is its copy from before.
    s.forward.resize(allocs.size());
    s.changed.assign(allocs.size(), false);
    for (size_t i = 0; i < allocs.size(); ++i) {
        if (std::memcmp(s.before[i].data(), bytes_of(allocs[i]), allocs[i].size) == 0) continue;
        s.changed[i] = true;
        s.forward[i].assign(bytes_of(allocs[i]), bytes_of(allocs[i]) + allocs[i].size);
        std::memcpy(reinterpret_cast<void*>(allocs[i].begin), s.before[i].data(), allocs[i].size);
    }
    if (std::string fault = run_grid(launch, Schedule{Schedule::kReverse, 0, true}, true);
        !fault.empty())
        return fault;
    const bool tolerant = g_float_atomics.load();
    for (size_t i = 0; i < allocs.size(); ++i) {
        std::string differs =
            compare_runs(allocs[i], s.changed[i] ? s.forward[i] : s.before[i], tolerant);
        if (!differs.empty()) return differs;
    }
    ++s.agreed;
    return "";
}

}  // namespace trainrig::emu

#include "bench/stream_run.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/mman.h>

#include <barrier>
#include <chrono>
#include <thread>

#include "bench/benchmark.h"

namespace trainrig::bench {
namespace {

// a = 1, b = 2, c = 0 at the start; q = 0.5 keeps every value a short binary fraction, so
// the check is exact whatever the number of rounds (3 would grow as 3^n).
constexpr double kA0 = 1, kB0 = 2, kC0 = 0, kQ = 0.5;

class Arrays {
public:
    explicit Arrays(size_t bytes) : bytes_(bytes) {
        void* p = ::mmap(nullptr, 3 * bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        base_ = p == MAP_FAILED ? nullptr : static_cast<double*>(p);
        // Huge pages where the kernel offers them on request: fewer faults and TLB misses, as
        // STREAM's static arrays get with transparent huge pages always on.
        if (base_) ::madvise(base_, 3 * bytes, MADV_HUGEPAGE);
    }
    ~Arrays() {
        if (base_) ::munmap(base_, 3 * bytes_);
    }
    Arrays(const Arrays&) = delete;
    Arrays& operator=(const Arrays&) = delete;
    bool ok() const { return base_ != nullptr; }
    double* a() const { return base_; }
    double* b() const { return base_ + bytes_ / sizeof(double); }
    double* c() const { return base_ + 2 * bytes_ / sizeof(double); }
    size_t total_bytes() const { return 3 * bytes_; }

private:
    size_t bytes_;
    double* base_ = nullptr;
};

enum class Op { kInit, kCopy, kTriad, kCheck, kExit };

// Restores the calling thread's CPU mask when the team is done with it.
class SavedAffinity {
public:
    SavedAffinity() { ok_ = ::sched_getaffinity(0, sizeof set_, &set_) == 0; }
    ~SavedAffinity() {
        if (ok_) ::sched_setaffinity(0, sizeof set_, &set_);
    }
    SavedAffinity(const SavedAffinity&) = delete;
    SavedAffinity& operator=(const SavedAffinity&) = delete;

private:
    cpu_set_t set_{};
    bool ok_ = false;
};

}  // namespace

StreamExpected stream_expected(unsigned iterations) {
    StreamExpected e{kA0, kB0, kC0};
    for (unsigned i = 0; i < iterations; ++i) {
        e.c = e.a;
        e.a = e.b + kQ * e.c;
    }
    return e;
}

Result<StreamTimes> run_stream(const HostTopology& topo, const StreamConfig& config,
                               const std::atomic<bool>* cancel) {
    const size_t n_threads = config.pus.size();
    // Whole cache lines per thread, so no two threads write one line.
    const size_t n = config.elements / 8 * 8;
    if (n_threads == 0 || n < 8 * n_threads)
        return Status{Errc::kInternal, "the STREAM run has no threads or too few elements"};
    Arrays arrays(n * sizeof(double));
    if (!arrays.ok())
        return Status{Errc::kIo, fmt::format("could not map {} MiB for the STREAM arrays",
                                             arrays.total_bytes() >> 20)};
    if (config.numa_node >= 0)
        TRAINRIG_TRY(topo.bind_memory(arrays.a(), arrays.total_bytes(), config.numa_node));

    SavedAffinity saved;
    std::vector<Status> pinned(n_threads);
    std::vector<size_t> wrong(n_threads, 0), first_wrong(n_threads, n);
    Op op = Op::kInit;
    std::barrier sync(static_cast<std::ptrdiff_t>(n_threads));
    StreamExpected expect{kA0, kB0, kC0};

    // Thread t owns elements [lo, hi) of every array: it touches them first and works on them.
    const auto work = [&](size_t t) {
        const size_t per = n / n_threads / 8 * 8;
        const size_t lo = t * per, hi = t + 1 == n_threads ? n : lo + per;
        double* __restrict a = arrays.a();
        double* __restrict b = arrays.b();
        double* __restrict c = arrays.c();
        switch (op) {
            case Op::kInit:
                for (size_t j = lo; j < hi; ++j) a[j] = kA0, b[j] = kB0, c[j] = kC0;
                break;
            case Op::kCopy:
                for (size_t j = lo; j < hi; ++j) c[j] = a[j];
                break;
            case Op::kTriad:
                for (size_t j = lo; j < hi; ++j) a[j] = b[j] + kQ * c[j];
                break;
            case Op::kCheck:
                for (size_t j = lo; j < hi; ++j) {
                    if (a[j] != expect.a || b[j] != expect.b || c[j] != expect.c) {
                        if (wrong[t]++ == 0) first_wrong[t] = j;
                    }
                }
                break;
            case Op::kExit:
                break;
        }
    };
    const auto worker = [&](size_t t) {
        pinned[t] = topo.bind_thread(config.pus[t]);
        for (;;) {
            sync.arrive_and_wait();  // op is set
            if (op == Op::kExit) return;
            work(t);
            sync.arrive_and_wait();  // op done everywhere
        }
    };
    std::vector<std::jthread> team;
    for (size_t t = 1; t < n_threads; ++t) team.emplace_back(worker, t);
    pinned[0] = topo.bind_thread(config.pus[0]);

    // Runs one op on every thread (this one is thread 0); returns its wall time in seconds.
    const auto step = [&](Op o) {
        op = o;
        sync.arrive_and_wait();
        const auto start = std::chrono::steady_clock::now();
        work(0);
        sync.arrive_and_wait();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    StreamTimes times;
    step(Op::kInit);
    bool stopped = false;
    for (unsigned it = 0; it <= config.repeats; ++it) {
        if (cancel && cancel->load()) {
            stopped = true;
            break;
        }
        const double copy = step(Op::kCopy);
        const double triad = step(Op::kTriad);
        expect = stream_expected(it + 1);
        if (it == 0) continue;  // the first round pays for page faults and cold caches
        times.copy_seconds.push_back(copy);
        times.triad_seconds.push_back(triad);
    }
    if (!stopped) step(Op::kCheck);
    op = Op::kExit;
    sync.arrive_and_wait();
    team.clear();
    if (stopped) return interrupted_status();
    for (const auto& s : pinned)
        if (!s.ok()) return s;

    size_t bad = 0, first = n;
    for (size_t t = 0; t < n_threads; ++t) {
        bad += wrong[t];
        first = std::min(first, first_wrong[t]);
    }
    times.verified = bad == 0;
    times.detail = bad == 0
                       ? fmt::format("all {} elements of a, b, c equal {}, {}, {}", n, expect.a,
                                     expect.b, expect.c)
                       : fmt::format("{} of {} elements wrong, first at index {}", bad, n, first);
    return times;
}

}  // namespace trainrig::bench

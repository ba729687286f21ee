#include "bench/storage_io.h"

#include <fmt/format.h>
#include <liburing.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "bench/benchmark.h"

namespace trainrig::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Where the next read goes. Sequential readers share one cursor; random ones draw block indices.
class Offsets {
public:
    Offsets(const IoPattern& p, uint64_t file_bytes)
        : block_(p.block_bytes), blocks_(file_bytes / p.block_bytes), random_(p.random) {}
    uint64_t next(std::mt19937_64& rng) {
        if (random_) return std::uniform_int_distribution<uint64_t>(0, blocks_ - 1)(rng) * block_;
        return cursor_.fetch_add(1, std::memory_order_relaxed) % blocks_ * block_;
    }

private:
    uint64_t block_, blocks_;
    bool random_;
    std::atomic<uint64_t> cursor_{0};
};

// Checks every 4 KiB block of one completed read; returns how many were wrong.
uint64_t check_read(const ScratchFile& f, uint64_t offset, const unsigned char* data, size_t n,
                    IoSample& s) {
    uint64_t bad = 0;
    for (size_t b = 0; b < n; b += kIoAlign) {
        const uint64_t block = (offset + b) / kIoAlign;
        if (!block_ok(f.seed(), block, data + b) && bad++ == 0 && s.bad_blocks == 0)
            s.first_bad_block = block;
    }
    s.bad_blocks += bad;
    return bad;
}

Status read_error(int err, uint64_t offset) {
    return Status{Errc::kIo, fmt::format("a read of the test file at offset {} failed: {}", offset,
                                         std::strerror(err))};
}

// One thread submits and reaps, so completions can wait until it asks for them instead of
// interrupting it (each interruption is an inter-processor interrupt, dear on a VM): single
// issuer with deferred task work (Linux 6.1), else cooperative task work (5.19), else plain.
int init_ring(unsigned depth, io_uring& ring) {
    for (const unsigned flags :
         {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_COOP_TASKRUN, 0u}) {
        io_uring_params params{};
        params.flags = flags;
        const int rc = io_uring_queue_init_params(depth, &ring, &params);
        if (rc != -EINVAL) return rc;
    }
    return -EINVAL;
}

Result<IoSample> run_uring(const ScratchFile& f, const IoPattern& p,
                           const std::atomic<bool>* cancel) {
    io_uring ring{};
    if (const int rc = init_ring(p.depth, ring); rc < 0)
        return Status{Errc::kUnsupported,
                      fmt::format("io_uring is not available: {}", std::strerror(-rc)),
                      "use --io-engine threads"};
    struct RingGuard {
        io_uring* r;
        ~RingGuard() { io_uring_queue_exit(r); }
    } guard{&ring};
    AlignedBuffer buffers = aligned_buffer(p.depth * p.block_bytes);
    if (!buffers) return Status{Errc::kIo, "cannot allocate the read buffers"};
    std::vector<uint64_t> offsets(p.depth);
    Offsets where(p, f.bytes());
    std::mt19937_64 rng(p.rng_seed);
    IoSample s;
    const auto submit = [&](unsigned slot) {
        offsets[slot] = where.next(rng);
        io_uring_sqe* sqe = io_uring_get_sqe(&ring);
        io_uring_prep_read(sqe, f.fd(), buffers.get() + slot * p.block_bytes,
                           static_cast<unsigned>(p.block_bytes), offsets[slot]);
        io_uring_sqe_set_data64(sqe, slot);
    };
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(p.seconds);
    for (unsigned slot = 0; slot < p.depth; ++slot) submit(slot);
    unsigned in_flight = p.depth;
    Status failed;
    bool stop = false;
    while (in_flight > 0) {
        if (const int rc = io_uring_submit_and_wait(&ring, 1); rc < 0 && rc != -EINTR) {
            // Reads may still be in flight into the buffers, and the ring's teardown does not
            // wait for them: leave the buffers allocated rather than let the kernel write into
            // freed memory (this only happens when the ring itself fails).
            (void)buffers.release();
            return Status{Errc::kIo, fmt::format("io_uring failed: {}", std::strerror(-rc))};
        }
        io_uring_cqe* cqe = nullptr;
        unsigned head = 0, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            ++seen;
            --in_flight;
            const auto slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
            if (cqe->res < 0 || static_cast<size_t>(cqe->res) != p.block_bytes) {
                if (failed.ok())
                    failed = cqe->res < 0 ? read_error(-cqe->res, offsets[slot])
                                          : Status{Errc::kIo,
                                                   "a read of the test file came "
                                                   "back short"};
                stop = true;
                continue;
            }
            ++s.ios;
            s.bytes += p.block_bytes;
            check_read(f, offsets[slot], buffers.get() + slot * p.block_bytes, p.block_bytes, s);
            if (!stop && Clock::now() < deadline && !(cancel && cancel->load())) {
                submit(slot);
                ++in_flight;
            } else {
                stop = true;
            }
        }
        io_uring_cq_advance(&ring, seen);
    }
    s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!failed.ok()) return failed;
    return s;
}

Result<IoSample> run_threads(const ScratchFile& f, const IoPattern& p,
                             const std::atomic<bool>* cancel) {
    Offsets where(p, f.bytes());
    std::vector<IoSample> per(p.depth);
    std::vector<Status> status(p.depth);
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(p.seconds);
    {
        std::vector<std::jthread> pool;
        for (unsigned t = 0; t < p.depth; ++t) {
            pool.emplace_back([&, t] {
                AlignedBuffer buf = aligned_buffer(p.block_bytes);
                if (!buf) {
                    status[t] = Status{Errc::kIo, "cannot allocate a read buffer"};
                    return;
                }
                std::mt19937_64 rng(p.rng_seed + t);
                while (Clock::now() < deadline && !(cancel && cancel->load())) {
                    const uint64_t off = where.next(rng);
                    const ssize_t r =
                        ::pread(f.fd(), buf.get(), p.block_bytes, static_cast<off_t>(off));
                    if (r < 0 && errno == EINTR) continue;
                    if (r < 0 || static_cast<size_t>(r) != p.block_bytes) {
                        status[t] = r < 0 ? read_error(errno, off)
                                          : Status{Errc::kIo,
                                                   "a read of the test file came back "
                                                   "short"};
                        return;
                    }
                    ++per[t].ios;
                    per[t].bytes += p.block_bytes;
                    check_read(f, off, buf.get(), p.block_bytes, per[t]);
                }
            });
        }
    }
    IoSample s;
    s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (unsigned t = 0; t < p.depth; ++t) {
        if (!status[t].ok()) return status[t];
        s.ios += per[t].ios;
        s.bytes += per[t].bytes;
        if (per[t].bad_blocks && !s.bad_blocks) s.first_bad_block = per[t].first_bad_block;
        s.bad_blocks += per[t].bad_blocks;
    }
    return s;
}

}  // namespace

Result<IoEngine> resolve_io_engine(const std::string& name) {
    if (name == "threads") return IoEngine::kThreads;
    if (name != "io_uring" && name != "auto")
        return Status{Errc::kInvalidInput,
                      fmt::format("--io-engine {} is not one of auto, io_uring, threads", name)};
    io_uring ring{};
    if (const int rc = io_uring_queue_init(2, &ring, 0); rc < 0) {
        if (name == "auto") return IoEngine::kThreads;
        return Status{Errc::kUnsupported,
                      fmt::format("io_uring is not available here: {}", std::strerror(-rc)),
                      "use --io-engine threads"};
    }
    io_uring_queue_exit(&ring);
    return IoEngine::kIoUring;
}

const char* io_engine_name(IoEngine e) { return e == IoEngine::kIoUring ? "io_uring" : "threads"; }

Result<IoSample> run_io(const ScratchFile& file, const IoPattern& pattern, IoEngine engine,
                        const std::atomic<bool>* cancel) {
    if (pattern.depth == 0 || pattern.block_bytes % kIoAlign != 0 ||
        file.bytes() < pattern.block_bytes)
        return Status{Errc::kInternal, "storage read pattern does not fit the test file"};
    auto s = engine == IoEngine::kIoUring ? run_uring(file, pattern, cancel)
                                          : run_threads(file, pattern, cancel);
    if (s && cancel && cancel->load()) return interrupted_status();
    return s;
}

}  // namespace trainrig::bench

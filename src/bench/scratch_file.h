// The storage benchmark's test file: created in the data directory as an unnamed file
// (O_TMPFILE, or created and unlinked at once where the filesystem lacks it), so that nothing is
// left behind however the run ends, even killed. Filled with a verifiable pattern through
// O_DIRECT and read back through a second O_DIRECT descriptor.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/status.h"

namespace trainrig::bench {

inline constexpr size_t kIoAlign = 4096;  // logical block size O_DIRECT buffers and offsets use

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<unsigned char, FreeDeleter>;

// kIoAlign-aligned memory for O_DIRECT transfers; null when it cannot be had.
inline AlignedBuffer aligned_buffer(size_t bytes) {
    void* p = nullptr;
    if (::posix_memalign(&p, kIoAlign, bytes) != 0) return nullptr;
    return AlignedBuffer(static_cast<unsigned char*>(p));
}

class ScratchFile {
public:
    // Refuses (kUnsupported) when the filesystem has less than bytes + a margin free, or does
    // not take O_DIRECT. Writing checks `cancel` between blocks.
    static Result<ScratchFile> create(const std::string& dir, uint64_t bytes, uint64_t seed,
                                      const std::atomic<bool>* cancel);
    ScratchFile(ScratchFile&& other) noexcept;
    ScratchFile& operator=(ScratchFile&&) = delete;
    ScratchFile(const ScratchFile&) = delete;
    ~ScratchFile();

    int fd() const { return fd_; }  // O_DIRECT, read-only use
    uint64_t bytes() const { return bytes_; }
    uint64_t seed() const { return seed_; }
    double write_seconds() const { return write_seconds_; }

private:
    ScratchFile(int fd, uint64_t bytes, uint64_t seed) : fd_(fd), bytes_(bytes), seed_(seed) {}
    int fd_ = -1;
    uint64_t bytes_ = 0;
    uint64_t seed_ = 0;
    double write_seconds_ = 0;
};

// The pattern: every 4 KiB block starts with (seed, block index) and is filled with a hash of
// both, so a read returning another block, stale data or zeros is caught.
void fill_block(uint64_t seed, uint64_t block, unsigned char* out);
bool block_ok(uint64_t seed, uint64_t block, const unsigned char* data);

// Free bytes the test file must leave on the filesystem: 5 % of it, at least 1 GiB.
uint64_t scratch_margin_bytes(uint64_t filesystem_bytes);

}  // namespace trainrig::bench

// The read loops of the storage benchmark: keep `depth` O_DIRECT reads of `block_bytes` in
// flight against the test file for `seconds`, sequential (wrapping at the end) or at uniformly
// random aligned offsets, and check every 4 KiB block that comes back. Two engines: io_uring
// (liburing; one thread, one ring) and a pool of `depth` threads issuing pread, for kernels where
// io_uring is absent or disabled.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "bench/scratch_file.h"
#include "core/status.h"

namespace trainrig::bench {

enum class IoEngine { kIoUring, kThreads };

// "auto" takes io_uring when this kernel lets the process set up a ring, else threads.
Result<IoEngine> resolve_io_engine(const std::string& name);
const char* io_engine_name(IoEngine e);

struct IoPattern {
    bool random = false;
    size_t block_bytes = size_t{1} << 20;
    unsigned depth = 8;
    double seconds = 5;
    uint64_t rng_seed = 1;
};

struct IoSample {
    uint64_t ios = 0;
    uint64_t bytes = 0;
    double seconds = 0;
    uint64_t bad_blocks = 0;  // 4 KiB blocks whose content was not what was written
    uint64_t first_bad_block = 0;
};

Result<IoSample> run_io(const ScratchFile& file, const IoPattern& pattern, IoEngine engine,
                        const std::atomic<bool>* cancel);

}  // namespace trainrig::bench

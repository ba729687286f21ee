#include "bench/scratch_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

#include "bench/benchmark.h"

namespace trainrig::bench {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

double gib(uint64_t bytes) { return static_cast<double>(bytes) / 1073741824.0; }

Status dir_error(const char* what, const std::string& dir) {
    return Status{Errc::kIo, fmt::format("{} in {}: {}", what, dir, std::strerror(errno))};
}

// An unnamed regular file in dir, or a named one unlinked at once.
int open_unnamed(const std::string& dir, int flags) {
    int fd = ::open(dir.c_str(), O_TMPFILE | flags, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    std::string path = dir + "/.trainrig-bench-XXXXXX";
    fd = ::mkostemp(path.data(), flags & ~(O_RDWR | O_WRONLY));
    if (fd >= 0) ::unlink(path.c_str());
    return fd;
}

}  // namespace

void fill_block(uint64_t seed, uint64_t block, unsigned char* out) {
    uint64_t words[kIoAlign / 8];
    words[0] = seed;
    words[1] = block;
    uint64_t h = mix(seed ^ mix(block));
    for (size_t i = 2; i < kIoAlign / 8; ++i) words[i] = h = mix(h);
    std::memcpy(out, words, kIoAlign);
}

bool block_ok(uint64_t seed, uint64_t block, const unsigned char* data) {
    // The header alone catches misplaced, stale and zeroed blocks; one body word catches a
    // block whose header survived and body did not, without hashing the whole block per read.
    uint64_t w[3];
    std::memcpy(w, data, sizeof w);
    return w[0] == seed && w[1] == block && w[2] == mix(mix(seed ^ mix(block)));
}

uint64_t scratch_margin_bytes(uint64_t filesystem_bytes) {
    return std::max<uint64_t>(filesystem_bytes / 20, uint64_t{1} << 30);
}

Result<ScratchFile> ScratchFile::create(const std::string& dir, uint64_t bytes, uint64_t seed,
                                        const std::atomic<bool>* cancel) {
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) return dir_error("cannot read free space", dir);
    const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    const uint64_t margin =
        scratch_margin_bytes(static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize);
    if (free_bytes < bytes + margin)
        return Status{Errc::kUnsupported,
                      fmt::format("storage needs {:.1f} GiB free in {} for its test file and "
                                  "{:.1f} GiB to spare, but only {:.1f} GiB is free",
                                  gib(bytes), dir, gib(margin), gib(free_bytes)),
                      "pass a smaller --file-size or another --data-dir"};
    const int fd = open_unnamed(dir, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EINVAL)
            return Status{Errc::kUnsupported,
                          fmt::format("the filesystem of {} does not take O_DIRECT (tmpfs?), so "
                                      "reads there would measure the page cache, not a disk",
                                      dir),
                          "point --data-dir at a directory on the disk to measure"};
        return dir_error("cannot create the test file", dir);
    }
    ScratchFile file(fd, bytes / kIoAlign * kIoAlign, seed);
    // posix_fallocate returns the error instead of setting errno.
    if (const int e = ::posix_fallocate(fd, 0, static_cast<off_t>(file.bytes_)); e == ENOSPC) {
        errno = e;
        return dir_error("cannot allocate the test file", dir);
    }

    constexpr size_t kChunk = size_t{1} << 20;
    AlignedBuffer buf = aligned_buffer(kChunk);
    if (!buf) return Status{Errc::kIo, "cannot allocate an aligned write buffer"};
    const auto start = std::chrono::steady_clock::now();
    for (uint64_t off = 0; off < file.bytes_; off += kChunk) {
        if (cancel && cancel->load()) return interrupted_status();
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, file.bytes_ - off));
        for (size_t b = 0; b < n; b += kIoAlign)
            fill_block(seed, (off + b) / kIoAlign, buf.get() + b);
        size_t done = 0;
        while (done < n) {
            const ssize_t w =
                ::pwrite(fd, buf.get() + done, n - done, static_cast<off_t>(off + done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return dir_error("cannot write the test file", dir);
            done += static_cast<size_t>(w);
        }
    }
    if (::fsync(fd) != 0) return dir_error("cannot flush the test file", dir);
    file.write_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return file;
}

ScratchFile::ScratchFile(ScratchFile&& other) noexcept
    : fd_(other.fd_),
      bytes_(other.bytes_),
      seed_(other.seed_),
      write_seconds_(other.write_seconds_) {
    other.fd_ = -1;
}

ScratchFile::~ScratchFile() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace trainrig::bench

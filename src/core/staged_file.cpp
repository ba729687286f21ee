#include "core/staged_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <random>

namespace trainrig {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

Status write_fd(int fd, std::string_view data, const std::string& what) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_status(errno, "write", what);
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return ok_status();
}

}  // namespace

Result<StagedFile> StagedFile::create(std::string target, unsigned mode) {
    // The pid says whose file it is; the random part keeps a leftover of a killed run (same pid
    // in a restarted container) from blocking the next one.
    static std::atomic<unsigned> counter{0};
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    StagedFile f;
    f.target_ = std::move(target);
    for (int attempt = 0;; ++attempt) {
        f.temp_ = fmt::format("{}.tmp-{}-{}-{:08x}", f.target_, ::getpid(), counter++,
                              static_cast<uint32_t>(rng()));
        f.fd_ = ::open(f.temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (f.fd_ >= 0) break;
        const int err = errno;
        if (err == EEXIST && attempt < 8) continue;
        f.temp_.clear();
        return errno_status(err, "create", f.target_);
    }
    f.buffer_.reserve(kBufferBytes);
    return f;
}

StagedFile::StagedFile(StagedFile&& o) noexcept
    : target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      fd_(o.fd_),
      buffer_(std::move(o.buffer_)),
      written_(o.written_) {
    o.fd_ = -1;
    o.temp_.clear();
}

StagedFile& StagedFile::operator=(StagedFile&& o) noexcept {
    if (this != &o) {
        abandon();
        target_ = std::move(o.target_);
        temp_ = std::move(o.temp_);
        fd_ = o.fd_;
        buffer_ = std::move(o.buffer_);
        written_ = o.written_;
        o.fd_ = -1;
        o.temp_.clear();
    }
    return *this;
}

StagedFile::~StagedFile() { abandon(); }

Status StagedFile::write(std::string_view bytes) {
    if (fd_ < 0) return {Errc::kInternal, fmt::format("{} was written after prepare()", target_)};
    written_ += bytes.size();
    if (buffer_.size() + bytes.size() <= kBufferBytes) {
        buffer_.append(bytes);
        return ok_status();
    }
    TRAINRIG_TRY(flush());
    if (bytes.size() >= kBufferBytes) return write_fd(fd_, bytes, target_);
    buffer_.append(bytes);
    return ok_status();
}

Status StagedFile::flush() {
    if (buffer_.empty()) return ok_status();
    auto s = write_fd(fd_, buffer_, target_);
    buffer_.clear();
    return s;
}

Status StagedFile::write_at(size_t offset, std::string_view bytes) {
    if (fd_ < 0) return {Errc::kInternal, fmt::format("{} was written after prepare()", target_)};
    TRAINRIG_TRY(flush());
    while (!bytes.empty()) {
        const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_status(errno, "write", target_);
        }
        bytes.remove_prefix(static_cast<size_t>(n));
        offset += static_cast<size_t>(n);
    }
    return ok_status();
}

Status StagedFile::prepare() {
    if (fd_ < 0) return ok_status();  // already prepared
    TRAINRIG_TRY(flush());
    if (::fsync(fd_) != 0) return errno_status(errno, "fsync", target_);
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return errno_status(errno, "close", target_);
    std::string().swap(buffer_);
    return ok_status();
}

Status StagedFile::publish() {
    if (fd_ >= 0) TRAINRIG_TRY(prepare());
    if (::rename(temp_.c_str(), target_.c_str()) != 0)
        return errno_status(errno, "rename", target_);
    temp_.clear();
    return ok_status();
}

Status StagedFile::commit() {
    TRAINRIG_TRY(prepare());
    return publish();
}

void StagedFile::abandon() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
    buffer_.clear();
}

Status fsync_parent(const std::string& path) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (parent.empty()) parent = ".";
    const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", parent.string());
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return errno_status(err, "fsync", parent.string());
    return ok_status();
}

}  // namespace trainrig

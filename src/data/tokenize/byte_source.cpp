#include "data/tokenize/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace trainrig::data {
namespace {

class FileReader {
public:
    explicit FileReader(int fd) : fd_(fd) {}
    ~FileReader() { ::close(fd_); }
    Result<size_t> read(char* buf, size_t n, const std::string& path) {
        for (;;) {
            const ssize_t got = ::read(fd_, buf, n);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return errno_status(errno, "read", path);
            position_ += static_cast<uint64_t>(got);
            return static_cast<size_t>(got);
        }
    }
    uint64_t position() const { return position_; }

private:
    int fd_;
    uint64_t position_ = 0;
};

class PlainSource final : public ByteSource {
public:
    PlainSource(std::string path, uint64_t size, int fd) : file_(fd) {
        path_ = std::move(path);
        file_size_ = size;
    }
    Result<size_t> read(char* buf, size_t n) override { return file_.read(buf, n, path_); }
    uint64_t file_position() const override { return file_.position(); }

private:
    FileReader file_;
};

// Compressed input: fills `in_` from the file and inflates into the caller's buffer.
class GzipSource final : public ByteSource {
public:
    GzipSource(std::string path, uint64_t size, int fd) : file_(fd), in_(1 << 16) {
        path_ = std::move(path);
        file_size_ = size;
        // 16 + MAX_WBITS: gzip wrapper; concatenated members are handled below.
        inflateInit2(&z_, 16 + MAX_WBITS);
    }
    ~GzipSource() override { inflateEnd(&z_); }

    Result<size_t> read(char* buf, size_t n) override {
        z_.next_out = reinterpret_cast<Bytef*>(buf);
        z_.avail_out = static_cast<uInt>(n);
        while (z_.avail_out == n) {
            if (z_.avail_in == 0) {
                auto got = file_.read(in_.data(), in_.size(), path_);
                if (!got) return got.status();
                if (*got == 0) {
                    if (!at_member_end_)
                        return Status{
                            Errc::kInvalidInput,
                            fmt::format("{} ends in the middle of its gzip stream", path_)};
                    return size_t{0};
                }
                z_.next_in = reinterpret_cast<Bytef*>(in_.data());
                z_.avail_in = static_cast<uInt>(*got);
            }
            if (at_member_end_ &&
                std::all_of(z_.next_in, z_.next_in + z_.avail_in, [](Bytef b) { return b == 0; })) {
                // Zero padding after the last member (tape and block-device images): gzip -d
                // and Python's gzip accept it.
                z_.avail_in = 0;
                continue;
            }
            const int rc = inflate(&z_, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                at_member_end_ = true;
                inflateReset(&z_);  // another gzip member may follow (cat a.gz b.gz)
            } else if (rc == Z_OK) {
                at_member_end_ = false;
            } else if (rc != Z_BUF_ERROR) {
                return Status{Errc::kInvalidInput,
                              fmt::format("{} is not valid gzip data ({})", path_,
                                          z_.msg != nullptr ? z_.msg : "inflate failed")};
            }
        }
        return n - z_.avail_out;
    }
    uint64_t file_position() const override { return file_.position(); }

private:
    FileReader file_;
    std::vector<char> in_;
    z_stream z_{};
    bool at_member_end_ = false;
};

class ZstdSource final : public ByteSource {
public:
    ZstdSource(std::string path, uint64_t size, int fd)
        : file_(fd), in_(ZSTD_DStreamInSize()), stream_(ZSTD_createDStream()) {
        path_ = std::move(path);
        file_size_ = size;
        ZSTD_initDStream(stream_);
    }
    ~ZstdSource() override { ZSTD_freeDStream(stream_); }

    Result<size_t> read(char* buf, size_t n) override {
        ZSTD_outBuffer out{buf, n, 0};
        while (out.pos == 0) {
            if (input_.pos == input_.size) {
                auto got = file_.read(in_.data(), in_.size(), path_);
                if (!got) return got.status();
                if (*got == 0) {
                    if (!frame_done_)
                        return Status{
                            Errc::kInvalidInput,
                            fmt::format("{} ends in the middle of its zstd frame", path_)};
                    return size_t{0};
                }
                input_ = ZSTD_inBuffer{in_.data(), *got, 0};
            }
            const size_t rc = ZSTD_decompressStream(stream_, &out, &input_);
            if (ZSTD_isError(rc))
                return Status{Errc::kInvalidInput, fmt::format("{} is not valid zstd data ({})",
                                                               path_, ZSTD_getErrorName(rc))};
            frame_done_ = rc == 0;
        }
        return out.pos;
    }
    uint64_t file_position() const override { return file_.position(); }

private:
    FileReader file_;
    std::vector<char> in_;
    ZSTD_DStream* stream_;
    ZSTD_inBuffer input_{nullptr, 0, 0};
    bool frame_done_ = true;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Status{Errc::kInvalidInput, fmt::format("{} is not a readable file", path)};
    }
    unsigned char magic[4] = {};
    const ssize_t got = ::pread(fd, magic, sizeof magic, 0);
    const auto size = static_cast<uint64_t>(st.st_size);
    if (got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
        return std::unique_ptr<ByteSource>(std::make_unique<GzipSource>(path, size, fd));
    if (got == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
        return std::unique_ptr<ByteSource>(std::make_unique<ZstdSource>(path, size, fd));
    return std::unique_ptr<ByteSource>(std::make_unique<PlainSource>(path, size, fd));
}

}  // namespace trainrig::data

// Reading an input file as a byte stream, decompressing gzip and zstd on the fly. The format is
// recognised by its magic bytes (1f 8b, 28 b5 2f fd), not its name.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"

namespace trainrig::data {

class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Up to n bytes into buf; 0 at the end.
    virtual Result<size_t> read(char* buf, size_t n) = 0;
    // Bytes of the file (compressed) consumed so far, and its size, for progress and ETA.
    virtual uint64_t file_position() const = 0;
    uint64_t file_size() const { return file_size_; }
    const std::string& path() const { return path_; }

protected:
    std::string path_;
    uint64_t file_size_ = 0;
};

Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path);

}  // namespace trainrig::data

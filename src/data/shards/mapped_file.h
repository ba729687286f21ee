// A read-only memory map of a whole file (empty files map to an empty span).
#pragma once

#include <span>
#include <string>

#include "core/status.h"

namespace trainrig::data {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& o) noexcept;
    MappedFile& operator=(MappedFile&& o) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    static Result<MappedFile> open(const std::string& path);
    std::span<const unsigned char> bytes() const { return {data_, size_}; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    const unsigned char* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace trainrig::data

#include "data/shards/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace trainrig::data {

Result<MappedFile> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return errno_status(err, "stat", path);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status{Errc::kInvalidInput, fmt::format("{} is not a regular file", path)};
    }
    MappedFile m;
    m.path_ = path;
    m.size_ = static_cast<size_t>(st.st_size);
    if (m.size_ > 0) {
        void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return errno_status(err, "mmap", path);
        }
        m.data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);
    return m;
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)), data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
    if (this != &o) {
        if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
        path_ = std::move(o.path_);
        data_ = o.data_;
        size_ = o.size_;
        o.data_ = nullptr;
        o.size_ = 0;
    }
    return *this;
}

}  // namespace trainrig::data

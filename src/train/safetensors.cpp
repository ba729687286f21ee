#include "train/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

namespace trainrig::train {
namespace {

// The header is JSON of at most 100 MB (the format's own limit).
constexpr uint64_t kMaxHeader = 100'000'000;

size_t dtype_bytes(TensorDtype d) {
    switch (d) {
        case TensorDtype::kF64:
            return 8;
        case TensorDtype::kF32:
            return 4;
        case TensorDtype::kF16:
        case TensorDtype::kBF16:
            return 2;
    }
    return 0;
}

// IEEE binary16 to binary32, subnormals and infinities included.
float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {  // subnormal: normalise
        exp = 113;
        while ((man & 0x400) == 0) {
            man <<= 1;
            --exp;
        }
        bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
    return std::bit_cast<float>(bits);
}

Status bad(const std::string& path, const std::string& what) {
    return Status(Errc::kInvalidInput,
                  fmt::format("{} is not a valid safetensors file: {}", path, what));
}

}  // namespace

uint64_t TensorEntry::elements() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status(Errc::kInvalidInput, fmt::format("{} is not a regular file", path));
    }
    const size_t bytes = static_cast<size_t>(st.st_size);
    if (bytes < 8) {
        ::close(fd);
        return bad(path, fmt::format("{} bytes is shorter than the 8-byte header length", bytes));
    }
    void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return errno_status(errno, "map", path);
    SafetensorsFile f;
    f.path_ = path;
    f.map_ = static_cast<const unsigned char*>(map);
    f.map_bytes_ = bytes;

    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = header << 8 | f.map_[i];
    if (header > kMaxHeader || header > bytes - 8)
        return bad(path,
                   fmt::format("the header claims {} bytes of a {}-byte file", header, bytes));
    f.data_start_ = 8 + header;
    const auto doc = nlohmann::json::parse(f.map_ + 8, f.map_ + 8 + header, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return bad(path, "the header is not a JSON object");
    const uint64_t data_bytes = bytes - f.data_start_;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& [name, v] : doc.items()) {
        if (name == "__metadata__") continue;
        auto where = [&](const std::string& what) {
            return bad(path, "tensor " + name + " " + what);
        };
        if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
            !v.contains("data_offsets"))
            return where("lacks dtype, shape or data_offsets");
        TensorEntry e;
        const auto& dtype = v["dtype"];
        if (dtype == "F32")
            e.dtype = TensorDtype::kF32;
        else if (dtype == "BF16")
            e.dtype = TensorDtype::kBF16;
        else if (dtype == "F16")
            e.dtype = TensorDtype::kF16;
        else if (dtype == "F64")
            e.dtype = TensorDtype::kF64;
        else
            return where(fmt::format("has dtype {}, not F32, BF16, F16 or F64", dtype.dump()));
        if (!v["shape"].is_array()) return where("has a shape that is not a list");
        for (const auto& d : v["shape"]) {
            if (!d.is_number_unsigned()) return where("has a negative or non-integer dimension");
            e.shape.push_back(d.get<int64_t>());
        }
        const auto& off = v["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
            !off[1].is_number_unsigned())
            return where("has data_offsets that are not two offsets");
        e.begin = off[0].get<uint64_t>();
        e.end = off[1].get<uint64_t>();
        if (e.begin > e.end || e.end > data_bytes)
            return where(fmt::format("lies at [{}, {}) outside the {} data bytes", e.begin, e.end,
                                     data_bytes));
        if (e.end - e.begin != e.elements() * dtype_bytes(e.dtype))
            return where(
                fmt::format("holds {} bytes for {} elements", e.end - e.begin, e.elements()));
        ranges.emplace_back(e.begin, e.end);
        f.tensors_.emplace(name, std::move(e));
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second) return bad(path, "two tensors overlap");
    return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept { *this = std::move(o); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
    if (this == &o) return *this;
    if (map_) ::munmap(const_cast<unsigned char*>(map_), map_bytes_);
    path_ = std::move(o.path_);
    tensors_ = std::move(o.tensors_);
    map_ = std::exchange(o.map_, nullptr);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
    data_start_ = o.data_start_;
    return *this;
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(const_cast<unsigned char*>(map_), map_bytes_);
}

Status SafetensorsFile::read(const std::string& name, std::span<float> out) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end())
        return Status(Errc::kNotFound, fmt::format("{} has no tensor {}", path_, name));
    const TensorEntry& e = it->second;
    if (e.elements() != out.size())
        return Status(Errc::kInvalidInput,
                      fmt::format("{}: tensor {} has {} elements, the model expects {}", path_,
                                  name, e.elements(), out.size()));
    const unsigned char* p = map_ + data_start_ + e.begin;
    const size_t n = out.size();
    // Little-endian on disk; every platform trainrig builds for is little-endian.
    static_assert(std::endian::native == std::endian::little);
    switch (e.dtype) {
        case TensorDtype::kF32:
            std::memcpy(out.data(), p, n * 4);
            break;
        case TensorDtype::kF64:
            for (size_t i = 0; i < n; ++i) {
                double d;
                std::memcpy(&d, p + 8 * i, 8);
                out[i] = static_cast<float>(d);
            }
            break;
        case TensorDtype::kBF16:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, p + 2 * i, 2);
                out[i] = std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
            }
            break;
        case TensorDtype::kF16:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, p + 2 * i, 2);
                out[i] = half_to_float(h);
            }
            break;
    }
    return ok_status();
}

}  // namespace trainrig::train

// Reads the safetensors format (huggingface/safetensors, docs "Format"): an 8-byte little-endian
// header length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the tensors' bytes, offsets relative to the end of the header.
// The file is memory-mapped read-only, so an 8B model's 16 GB is never copied whole; a tensor
// is converted to fp32 as it is read. Every rule of the format is checked before any data is
// trusted: header within the file, offsets within the data and not overlapping, byte counts
// matching shape × dtype.
//
// Written here rather than taken from a library: Debian packages no C++ safetensors reader, and
// the format is a JSON header over raw little-endian arrays.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainrig::train {

enum class TensorDtype { kF32, kF16, kBF16, kF64 };

struct TensorEntry {
    TensorDtype dtype = TensorDtype::kF32;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // within the data section
    uint64_t elements() const;
};

class SafetensorsFile {
public:
    static Result<SafetensorsFile> open(const std::string& path);
    SafetensorsFile(SafetensorsFile&&) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
    ~SafetensorsFile();

    const std::string& path() const { return path_; }
    const std::map<std::string, TensorEntry>& tensors() const { return tensors_; }
    // The tensor converted to fp32 into `out` (its element count must match).
    Status read(const std::string& name, std::span<float> out) const;

private:
    SafetensorsFile() = default;
    std::string path_;
    std::map<std::string, TensorEntry> tensors_;
    const unsigned char* map_ = nullptr;
    size_t map_bytes_ = 0;
    size_t data_start_ = 0;
};

}  // namespace trainrig::train

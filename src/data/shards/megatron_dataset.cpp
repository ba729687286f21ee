#include <fmt/format.h>

#include <cstring>

#include "data/shards/little_endian.h"
#include "data/shards/megatron_format.h"

namespace trainrig::data {

Result<MegatronDataset> MegatronDataset::open(const std::string& prefix) {
    MegatronDataset d;
    d.prefix_ = prefix;
    const std::string idx_path = prefix + ".idx", bin_path = prefix + ".bin";
    auto idx = MappedFile::open(idx_path);
    if (!idx) return idx.status();
    auto bin = MappedFile::open(bin_path);
    if (!bin) return bin.status();
    d.idx_ = std::move(idx).value();
    d.bin_ = std::move(bin).value();
    const auto bytes = d.idx_.bytes();
    const auto bad = [&](std::string what) {
        return Status{Errc::kInvalidInput, fmt::format("{}: {}", idx_path, what)};
    };
    if (bytes.size() < kMegatronHeaderBytes ||
        std::memcmp(bytes.data(), kMegatronMagic.data(), kMegatronMagic.size()) != 0)
        return bad("not a Megatron index (the file does not start with MMIDIDX)");
    const unsigned char* p = bytes.data() + 9;
    if (const auto version = load_le<uint64_t>(p); version != 1)
        return bad(fmt::format("index version {} (only version 1 exists)", version));
    const auto dtype = megatron_dtype_from_code(p[8]);
    if (!dtype) return bad(fmt::format("unknown dtype code {}", p[8]));
    d.dtype_ = *dtype;
    d.sequences_ = load_le<uint64_t>(p + 9);
    d.doc_count_ = load_le<uint64_t>(p + 17);
    if (d.doc_count_ == 0) return bad("document index count is 0 (it is documents + 1)");
    // Counts too large for the file cannot be multiplied out safely; they are wrong anyway.
    const bool plausible = d.sequences_ <= bytes.size() / 12 && d.doc_count_ <= bytes.size() / 8;
    const uint64_t expected =
        plausible ? kMegatronHeaderBytes + d.sequences_ * 12 + d.doc_count_ * 8 : 0;
    if (!plausible || expected != bytes.size())
        return bad(
            fmt::format("{} bytes, but its header ({} sequences, {} document indices) "
                        "needs {}",
                        bytes.size(), d.sequences_, d.doc_count_,
                        plausible ? fmt::format("{} bytes", expected) : "more"));
    const size_t item = dtype_size(d.dtype_);
    uint64_t pointer = 0;
    for (uint64_t s = 0; s < d.sequences_; ++s) {
        const int32_t len = load_le<int32_t>(bytes.data() + kMegatronHeaderBytes + 4 * s);
        if (len < 0) return bad(fmt::format("sequence {} has a negative length {}", s, len));
        const auto ptr =
            load_le<int64_t>(bytes.data() + kMegatronHeaderBytes + 4 * d.sequences_ + 8 * s);
        if (ptr < 0 || static_cast<uint64_t>(ptr) != pointer)
            return bad(
                fmt::format("sequence {} starts at byte {} of the .bin, but the lengths "
                            "before it end at byte {}",
                            s, ptr, pointer));
        pointer += static_cast<uint64_t>(len) * item;
    }
    if (pointer != d.bin_.size())
        return Status{
            Errc::kInvalidInput,
            fmt::format("{} is {} bytes, but the index describes {} ({} tokens of {})", bin_path,
                        d.bin_.size(), pointer, pointer / item, dtype_name(d.dtype_))};
    d.tokens_ = pointer / item;
    const unsigned char* docs = bytes.data() + kMegatronHeaderBytes + 12 * d.sequences_;
    int64_t previous = -1;
    for (uint64_t k = 0; k < d.doc_count_; ++k) {
        const auto v = load_le<int64_t>(docs + 8 * k);
        if ((k == 0 && v != 0) || v < previous || v > static_cast<int64_t>(d.sequences_))
            return bad(
                fmt::format("document index {} is {} (they rise from 0 to the sequence "
                            "count {})",
                            k, v, d.sequences_));
        previous = v;
    }
    if (previous != static_cast<int64_t>(d.sequences_))
        return bad(fmt::format("the last document index is {}, not the sequence count {}", previous,
                               d.sequences_));
    return d;
}

uint32_t MegatronDataset::length(uint64_t seq) const {
    return static_cast<uint32_t>(
        load_le<int32_t>(idx_.bytes().data() + kMegatronHeaderBytes + 4 * seq));
}

uint64_t MegatronDataset::first_token(uint64_t seq) const {
    const auto ptr =
        load_le<int64_t>(idx_.bytes().data() + kMegatronHeaderBytes + 4 * sequences_ + 8 * seq);
    return static_cast<uint64_t>(ptr) / dtype_size(dtype_);
}

}  // namespace trainrig::data

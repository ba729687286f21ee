// Reading Megatron-LM's indexed dataset (format: megatron_writer.cpp), memory-mapped, with every
// structural check `data verify` reports.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "data/shards/mapped_file.h"
#include "data/shards/token_dtype.h"

namespace trainrig::data {

inline constexpr std::array<char, 9> kMegatronMagic = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
inline constexpr size_t kMegatronHeaderBytes = 9 + 8 + 1 + 8 + 8;

class MegatronDataset {
public:
    // Checks the header, the sizes of both files against it, that pointers follow the lengths
    // contiguously and that document indices rise from 0 to the sequence count.
    static Result<MegatronDataset> open(const std::string& prefix);

    const std::string& prefix() const { return prefix_; }
    TokenDtype dtype() const { return dtype_; }
    uint64_t sequences() const { return sequences_; }
    uint64_t documents() const { return doc_count_ - 1; }
    uint64_t tokens() const { return tokens_; }
    uint32_t length(uint64_t seq) const;
    uint64_t first_token(uint64_t seq) const;  // token offset in the .bin
    // Token i of the whole .bin.
    int64_t token(uint64_t i) const { return load_token(bin_.bytes().data(), i, dtype_); }
    const MappedFile& bin() const { return bin_; }

private:
    std::string prefix_;
    MappedFile idx_, bin_;
    TokenDtype dtype_ = TokenDtype::kU16;
    uint64_t sequences_ = 0, doc_count_ = 0, tokens_ = 0;
};

}  // namespace trainrig::data

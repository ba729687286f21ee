// Token storage types of the shard formats, with Megatron-LM's dtype codes
// (megatron/core/datasets/indexed_dataset.py, DType).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trainrig::data {

enum class TokenDtype : uint8_t {
    kU8 = 1,
    kI8 = 2,
    kI16 = 3,
    kI32 = 4,
    kI64 = 5,
    kF64 = 6,
    kF32 = 7,
    kU16 = 8,
    kU32 = 100
};

size_t dtype_size(TokenDtype d);
std::string_view dtype_name(TokenDtype d);
std::optional<TokenDtype> megatron_dtype_from_code(uint8_t code);
// Megatron's DType.optimal_dtype: uint16 when the vocabulary has fewer than 65,500 ids, else
// int32.
TokenDtype megatron_dtype_for_vocab(size_t vocab_size);
// Reads token i of a packed array of dtype d (integer dtypes only).
int64_t load_token(const unsigned char* base, size_t i, TokenDtype d);

}  // namespace trainrig::data

#include "data/shards/token_dtype.h"

#include "data/shards/little_endian.h"

namespace trainrig::data {

size_t dtype_size(TokenDtype d) {
    switch (d) {
        case TokenDtype::kU8:
        case TokenDtype::kI8:
            return 1;
        case TokenDtype::kI16:
        case TokenDtype::kU16:
            return 2;
        case TokenDtype::kI32:
        case TokenDtype::kF32:
        case TokenDtype::kU32:
            return 4;
        case TokenDtype::kI64:
        case TokenDtype::kF64:
            return 8;
    }
    return 0;
}

std::string_view dtype_name(TokenDtype d) {
    switch (d) {
        case TokenDtype::kU8:
            return "uint8";
        case TokenDtype::kI8:
            return "int8";
        case TokenDtype::kI16:
            return "int16";
        case TokenDtype::kI32:
            return "int32";
        case TokenDtype::kI64:
            return "int64";
        case TokenDtype::kF64:
            return "float64";
        case TokenDtype::kF32:
            return "float32";
        case TokenDtype::kU16:
            return "uint16";
        case TokenDtype::kU32:
            return "uint32";
    }
    return "?";
}

std::optional<TokenDtype> megatron_dtype_from_code(uint8_t code) {
    if (code >= 1 && code <= 8) return static_cast<TokenDtype>(code);
    return std::nullopt;
}

TokenDtype megatron_dtype_for_vocab(size_t vocab_size) {
    return vocab_size < 65500 ? TokenDtype::kU16 : TokenDtype::kI32;
}

int64_t load_token(const unsigned char* base, size_t i, TokenDtype d) {
    switch (d) {
        case TokenDtype::kU8:
            return base[i];
        case TokenDtype::kI8:
            return static_cast<int8_t>(base[i]);
        case TokenDtype::kI16:
            return load_le<int16_t>(base + 2 * i);
        case TokenDtype::kU16:
            return load_le<uint16_t>(base + 2 * i);
        case TokenDtype::kI32:
            return load_le<int32_t>(base + 4 * i);
        case TokenDtype::kU32:
            return load_le<uint32_t>(base + 4 * i);
        case TokenDtype::kI64:
            return load_le<int64_t>(base + 8 * i);
        case TokenDtype::kF32:
            return static_cast<int64_t>(load_le<float>(base + 4 * i));
        case TokenDtype::kF64:
            return static_cast<int64_t>(load_le<double>(base + 8 * i));
    }
    return -1;
}

}  // namespace trainrig::data

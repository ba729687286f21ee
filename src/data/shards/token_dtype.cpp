#include "data/shards/token_dtype.h"

#include <cstring>

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
        case TokenDtype::kI16: {
            int16_t v;
            std::memcpy(&v, base + 2 * i, 2);
            return v;
        }
        case TokenDtype::kU16: {
            uint16_t v;
            std::memcpy(&v, base + 2 * i, 2);
            return v;
        }
        case TokenDtype::kI32: {
            int32_t v;
            std::memcpy(&v, base + 4 * i, 4);
            return v;
        }
        case TokenDtype::kU32: {
            uint32_t v;
            std::memcpy(&v, base + 4 * i, 4);
            return v;
        }
        case TokenDtype::kI64: {
            int64_t v;
            std::memcpy(&v, base + 8 * i, 8);
            return v;
        }
        case TokenDtype::kF32: {
            float v;
            std::memcpy(&v, base + 4 * i, 4);
            return static_cast<int64_t>(v);
        }
        case TokenDtype::kF64: {
            double v;
            std::memcpy(&v, base + 8 * i, 8);
            return static_cast<int64_t>(v);
        }
    }
    return -1;
}

}  // namespace trainrig::data

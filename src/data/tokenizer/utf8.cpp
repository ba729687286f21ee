#include "data/tokenizer/utf8.h"

#include <simdjson.h>

namespace trainrig::data {
namespace {

// Length of the valid sequence starting at text[i], or 0 with `consumed` set to the length of
// the maximal invalid subpart (Unicode 15 §3.9, "U+FFFD Substitution of Maximal Subparts").
size_t valid_sequence(std::string_view text, size_t i, size_t& consumed) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = b(i);
    consumed = 1;
    if (c < 0x80) return 1;
    size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    for (size_t k = 1; k <= need; ++k) {
        if (i + k >= text.size()) return 0;
        const unsigned char t = b(i + k);
        const unsigned char l = k == 1 ? lo : 0x80;
        const unsigned char h = k == 1 ? hi : 0xBF;
        if (t < l || t > h) return 0;
        consumed = k + 1;
    }
    return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
    return simdjson::validate_utf8(text.data(), text.size());
}

size_t first_invalid_utf8(std::string_view text) {
    if (is_valid_utf8(text)) return text.size();
    size_t i = 0;
    while (i < text.size()) {
        size_t consumed = 0;
        const size_t n = valid_sequence(text, i, consumed);
        if (n == 0) return i;
        i += n;
    }
    return text.size();
}

std::string repair_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 16);
    size_t i = 0;
    while (i < text.size()) {
        size_t consumed = 0;
        const size_t n = valid_sequence(text, i, consumed);
        if (n > 0) {
            out.append(text.substr(i, n));
            i += n;
        } else {
            out.append("\xEF\xBF\xBD");
            i += consumed;
        }
    }
    return out;
}

}  // namespace trainrig::data

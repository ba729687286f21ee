#include "data/tokenizer/byte_level.h"

#include <array>

namespace trainrig::data {
namespace {

bool printable(unsigned b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Alphabet {
    std::array<std::string, 256> shown;  // byte -> UTF-8 of its character
    std::array<int, 0x200> byte_of{};    // code point -> byte + 1 (0: not in the alphabet)

    Alphabet() {
        unsigned next = 0x100;
        for (unsigned b = 0; b < 256; ++b) {
            const unsigned cp = printable(b) ? b : next++;
            std::string utf8;
            if (cp < 0x80) {
                utf8.push_back(static_cast<char>(cp));
            } else {
                utf8.push_back(static_cast<char>(0xC0 | (cp >> 6)));
                utf8.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
            }
            shown[b] = utf8;
            byte_of[cp] = static_cast<int>(b) + 1;
        }
    }
};

const Alphabet& alphabet() {
    static const Alphabet a;
    return a;
}

}  // namespace

const std::string& byte_level_char(unsigned char b) { return alphabet().shown[b]; }

std::optional<std::string> byte_level_decode(std::string_view token) {
    const Alphabet& a = alphabet();
    std::string out;
    out.reserve(token.size());
    for (size_t i = 0; i < token.size();) {
        const auto c = static_cast<unsigned char>(token[i]);
        unsigned cp = 0;
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if (c >= 0xC2 && c <= 0xDF && i + 1 < token.size() &&
                   (static_cast<unsigned char>(token[i + 1]) & 0xC0) == 0x80) {
            cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(token[i + 1]) & 0x3Fu);
            i += 2;
        } else {
            return std::nullopt;
        }
        if (cp >= a.byte_of.size() || a.byte_of[cp] == 0) return std::nullopt;
        out.push_back(static_cast<char>(a.byte_of[cp] - 1));
    }
    return out;
}

}  // namespace trainrig::data

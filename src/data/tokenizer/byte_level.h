// GPT-2's byte-level alphabet: every byte is shown as one printable Unicode character, so that
// vocabulary files (encoder.json, vocab.bpe, Hugging Face tokenizer.json) can be text. The 188
// printable Latin-1 bytes stand for themselves; the other 68 map to U+0100 upward, in byte
// order (openai/gpt-2 src/encoder.py, bytes_to_unicode).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainrig::data {

// The UTF-8 encoding of the character byte `b` is shown as.
const std::string& byte_level_char(unsigned char b);

// Raw bytes of a token written in the byte-level alphabet; nullopt if it holds a character
// outside the alphabet (or is not valid UTF-8).
std::optional<std::string> byte_level_decode(std::string_view token);

}  // namespace trainrig::data

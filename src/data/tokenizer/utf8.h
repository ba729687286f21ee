// UTF-8 validation and repair for tokenizer input. Text that is not valid UTF-8 is repaired the
// way the WHATWG Encoding Standard decodes it (and Node's Buffer.toString, Python's
// errors="replace"): each maximal invalid subpart becomes U+FFFD. The reference tokenizers only
// ever see text decoded that way, so trainrig encodes the same repaired text.
#pragma once

#include <string>
#include <string_view>

namespace trainrig::data {

bool is_valid_utf8(std::string_view text);

// Byte offset of the first invalid sequence, or text.size() when the text is valid.
size_t first_invalid_utf8(std::string_view text);

// `text` with every maximal invalid subpart replaced by U+FFFD (EF BF BD).
std::string repair_utf8(std::string_view text);

}  // namespace trainrig::data

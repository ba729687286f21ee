// Finding special-token strings ("<|endoftext|>") in text, for encoding with --allow-special.
#pragma once

#include <string_view>
#include <vector>

#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

class SpecialMatcher {
public:
    explicit SpecialMatcher(const std::vector<SpecialToken>& specials);

    struct Hit {
        size_t pos = 0;
        size_t length = 0;
        uint32_t id = 0;
    };
    // The leftmost occurrence at or after `from` (the longest one at that position).
    std::optional<Hit> find(std::string_view text, size_t from) const;

private:
    std::vector<SpecialToken> specials_;  // longest first
    bool first_byte_[256] = {};
};

}  // namespace trainrig::data

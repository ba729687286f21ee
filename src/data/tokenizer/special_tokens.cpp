#include "data/tokenizer/special_tokens.h"

#include <algorithm>
#include <cstring>

namespace trainrig::data {

SpecialMatcher::SpecialMatcher(const std::vector<SpecialToken>& specials) : specials_(specials) {
    std::erase_if(specials_, [](const SpecialToken& s) { return s.text.empty(); });
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const auto& a, const auto& b) { return a.text.size() > b.text.size(); });
    for (const auto& s : specials_) first_byte_[static_cast<unsigned char>(s.text[0])] = true;
}

std::optional<SpecialMatcher::Hit> SpecialMatcher::find(std::string_view text, size_t from) const {
    if (specials_.empty()) return std::nullopt;
    for (size_t i = from; i < text.size(); ++i) {
        if (!first_byte_[static_cast<unsigned char>(text[i])]) continue;
        const std::string_view rest = text.substr(i);
        for (const auto& s : specials_)
            if (rest.starts_with(s.text)) return Hit{i, s.text.size(), s.id};
    }
    return std::nullopt;
}

}  // namespace trainrig::data

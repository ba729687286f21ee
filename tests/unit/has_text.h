// Whether a message contains a phrase: the check most error-message tests make.
#pragma once

#include <string_view>

namespace trainrig {

inline bool has(std::string_view s, std::string_view needle) {
    return s.find(needle) != std::string_view::npos;
}

}  // namespace trainrig

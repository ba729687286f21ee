#include "core/toml_text.h"

#include <fmt/format.h>

namespace trainrig {

Result<toml::table> parse_toml(std::string_view text, std::string_view where) {
    try {
        return toml::parse(text, where);
    } catch (const toml::parse_error& e) {
        return Status{Errc::kInvalidInput,
                      fmt::format("{} line {}: {}", where, e.source().begin.line, e.description())};
    }
}

}  // namespace trainrig

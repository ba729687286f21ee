// Parsing TOML text with toml++, a syntax error turned into one sentence naming the file and line.
#pragma once

#include <toml++/toml.h>

#include <string_view>

#include "core/status.h"

namespace trainrig {

// `where` names the text in the error ("rules.toml line 3: ...").
Result<toml::table> parse_toml(std::string_view text, std::string_view where);

}  // namespace trainrig

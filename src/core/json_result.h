// The envelope of every JSON result trainrig writes (docs/cli.md, "JSON output").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trainrig {

// A command's JSON result as every command writes it (docs/cli.md): the document's own fields
// plus `trainrig_version`, `command` ("doctor", "tune show") and `exit_code`, two-space
// indented, one newline at the end; text that is not UTF-8 is replaced, never an exception.
std::string json_result(nlohmann::json doc, std::string_view command, int exit_code);

}  // namespace trainrig

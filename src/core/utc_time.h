// A moment as people and tools read it in reports: ISO 8601 in UTC.
#pragma once

#include <ctime>
#include <optional>
#include <string>

namespace trainrig {

// "2026-12-02T17:04:41Z"; `compact` gives "20261202T170441Z" for file names.
std::string utc_iso8601(std::time_t t, bool compact = false);
// The inverse for the long form ("2026-12-02T17:04:41Z"); nullopt when it is not that form.
std::optional<std::time_t> parse_utc_iso8601(const std::string& text);

}  // namespace trainrig

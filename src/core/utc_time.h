// A moment as people and tools read it in reports: ISO 8601 in UTC.
#pragma once

#include <ctime>
#include <string>

namespace trainrig {

// "2026-12-02T17:04:41Z"; `compact` gives "20261202T170441Z" for file names.
std::string utc_iso8601(std::time_t t, bool compact = false);

}  // namespace trainrig

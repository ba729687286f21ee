#include "core/utc_time.h"

namespace trainrig {

std::string utc_iso8601(std::time_t t, bool compact) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace trainrig

#include "validate/report_path.h"

#include <fmt/format.h>

#include "core/utc_time.h"

namespace trainrig::validate {

namespace {

constexpr const char* kKnown = "{host}, {rank} and {time}";

Status bad(std::string_view option, std::string_view pattern, std::string_view why) {
    return {Errc::kInvalidInput, fmt::format("{} {}: {}", option, pattern, why),
            fmt::format("its placeholders are {}; write {{{{ or }}}} for a brace itself", kKnown)};
}

// A host name is one path component: a name with a slash or nothing in it would put the report
// somewhere else.
bool usable_host(const std::string& h) {
    return !h.empty() && h != "." && h != ".." && h.find('/') == std::string::npos;
}

}  // namespace

Result<std::string> expand_report_path(std::string_view pattern, const PathFacts& facts,
                                       std::string_view option) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '}') {
            if (i + 1 < pattern.size() && pattern[i + 1] == '}') {
                out += '}';
                ++i;
                continue;
            }
            return bad(option, pattern, "a '}' closes no placeholder");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t end = pattern.find('}', i);
        if (end == std::string_view::npos) return bad(option, pattern, "a '{' is never closed");
        const std::string_view name = pattern.substr(i + 1, end - i - 1);
        if (name == "host") {
            if (!usable_host(facts.host))
                return Status{Errc::kInvalidInput,
                              fmt::format("{} {}: this machine's host name \"{}\" cannot name a "
                                          "directory",
                                          option, pattern, facts.host),
                              "give the directory without {host}"};
            out += facts.host;
        } else if (name == "rank") {
            out += std::to_string(facts.rank);
        } else if (name == "time") {
            out += utc_iso8601(facts.time, true);
        } else {
            return bad(option, pattern, fmt::format("unknown placeholder {{{}}}", name));
        }
        i = end;
    }
    return out;
}

Status check_report_path(std::string_view pattern, std::string_view option) {
    auto r = expand_report_path(pattern, PathFacts{"host", 0, 0}, option);
    return r.ok() ? ok_status() : r.status();
}

}  // namespace trainrig::validate

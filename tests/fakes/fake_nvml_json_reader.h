// Typed reading of a fixture's JSON. Every complaint names the member it is about
// ("gpus[1].memory.used: expected a non-negative integer"), since that text is all a fixture's
// author sees when nvmlInit fails.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fake_nvml_model.h"

namespace fake_nvml {

using Json = nlohmann::json;

// A fixture that does not follow the schema; what() is the one-line complaint.
class FixtureError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& path, std::string_view what);

// One JSON object, read member by member. Members nobody asked for are reported, because a
// misspelt member would otherwise read as "absent" and quietly turn into NOT_SUPPORTED.
class ObjectReader {
public:
    ObjectReader(const Json& value, std::string path);

    const Json* find(std::string_view key);  // nullptr when absent
    const Json& get(std::string_view key);   // throws when absent
    std::string path(std::string_view key) const;
    // Throws for a member no find() asked about; names starting with "_" are comments.
    void reject_unknown() const;

    template <class Convert>
    auto optional(std::string_view key, Convert convert)
        -> std::optional<decltype(convert(std::declval<const Json&>(), std::string()))> {
        const Json* value = find(key);
        if (!value) return std::nullopt;
        return convert(*value, path(key));
    }

    template <class Convert>
    auto required(std::string_view key, Convert convert) {
        return convert(get(key), path(key));
    }

private:
    const Json& value_;
    std::string path_;
    std::set<std::string, std::less<>> asked_;
};

// Converters for ObjectReader::optional/required; each throws FixtureError on a wrong type.
std::string to_string(const Json& value, const std::string& path);
bool to_bool(const Json& value, const std::string& path);
int to_int(const Json& value, const std::string& path);
unsigned to_uint(const Json& value, const std::string& path);
unsigned long long to_uint64(const Json& value, const std::string& path);
unsigned to_uint_or_hex(const Json& value, const std::string& path);  // 540151006 or "0x20b210de"
double to_seconds(const Json& value, const std::string& path);
Return to_return_code(const Json& value, const std::string& path);  // "GPU_IS_LOST"

}  // namespace fake_nvml

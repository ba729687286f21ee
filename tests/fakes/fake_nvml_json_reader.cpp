#include "fake_nvml_json_reader.h"

#include <charconv>
#include <limits>

namespace fake_nvml {

void fail(const std::string& path, std::string_view what) {
    throw FixtureError(path.empty() ? std::string(what) : path + ": " + std::string(what));
}

ObjectReader::ObjectReader(const Json& value, std::string path)
    : value_(value), path_(std::move(path)) {
    if (!value_.is_object()) fail(path_, "expected an object");
}

const Json* ObjectReader::find(std::string_view key) {
    asked_.emplace(key);
    const auto it = value_.find(key);
    return it == value_.end() ? nullptr : &*it;
}

const Json& ObjectReader::get(std::string_view key) {
    const Json* value = find(key);
    if (!value) fail(path(key), "missing");
    return *value;
}

std::string ObjectReader::path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ObjectReader::reject_unknown() const {
    for (const auto& [key, value] : value_.items()) {
        if (key.starts_with("_") || asked_.contains(key)) continue;
        fail(path(key), "unknown member");
    }
}

std::string to_string(const Json& value, const std::string& path) {
    if (!value.is_string()) fail(path, "expected a string");
    return value.get<std::string>();
}

bool to_bool(const Json& value, const std::string& path) {
    if (!value.is_boolean()) fail(path, "expected true or false");
    return value.get<bool>();
}

int to_int(const Json& value, const std::string& path) {
    if (value.is_number_unsigned() &&
        value.get<unsigned long long>() <= unsigned(std::numeric_limits<int>::max()))
        return static_cast<int>(value.get<unsigned long long>());
    if (value.is_number_integer() && !value.is_number_unsigned() &&
        value.get<long long>() >= std::numeric_limits<int>::min())
        return static_cast<int>(value.get<long long>());
    fail(path, "expected a 32-bit integer");
}

unsigned long long to_uint64(const Json& value, const std::string& path) {
    // nlohmann reads non-negative literals as unsigned; a signed one here is negative.
    if (!value.is_number_unsigned()) fail(path, "expected a non-negative integer");
    return value.get<unsigned long long>();
}

unsigned to_uint(const Json& value, const std::string& path) {
    const auto wide = to_uint64(value, path);
    if (wide > std::numeric_limits<unsigned>::max()) fail(path, "does not fit in 32 bits");
    return static_cast<unsigned>(wide);
}

unsigned to_uint_or_hex(const Json& value, const std::string& path) {
    if (!value.is_string()) return to_uint(value, path);
    const auto& text = value.get_ref<const std::string&>();
    unsigned parsed = 0;
    const char* end = text.data() + text.size();
    bool ok = text.size() > 2 && (text.starts_with("0x") || text.starts_with("0X"));
    if (ok) {
        const auto [stop, error] = std::from_chars(text.data() + 2, end, parsed, 16);
        ok = stop == end && error == std::errc{};
    }
    if (!ok) fail(path, "expected an integer or a \"0x...\" string of at most 8 hex digits");
    return parsed;
}

double to_seconds(const Json& value, const std::string& path) {
    if (!value.is_number() || value.get<double>() < 0)
        fail(path, "expected a non-negative number of seconds");
    return value.get<double>();
}

Return to_return_code(const Json& value, const std::string& path) {
    const Return code = trainrig::nvml::return_from_name(to_string(value, path));
    if (code < 0) fail(path, "not an NVML return name (e.g. \"GPU_IS_LOST\")");
    return code;
}

}  // namespace fake_nvml

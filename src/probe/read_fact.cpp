// Typed single-value reads; see read_fact.h.
#include "probe/read_fact.h"

#include "core/text.h"

namespace trainrig {

namespace {
// read_parsed_fact() puts the path in front of this.
Status not_a(const char* what, std::string_view text) {
    return {Errc::kInvalidInput, std::string("expected ") + what + ", found " + preview(text)};
}
}  // namespace

Fact<std::string> read_string_fact(const RootFs& fs, const std::string& path) {
    auto text = fs.read(path);
    if (!text) return Fact<std::string>::from(text.status());
    return Fact<std::string>::known(sanitize_text(trim(*text)));
}

Fact<int64_t> read_i64_fact(const RootFs& fs, const std::string& path) {
    return read_parsed_fact<int64_t>(fs, path, [](const std::string& t) -> Result<int64_t> {
        if (auto v = parse_i64(t)) return *v;
        return not_a("an integer", t);
    });
}

Fact<uint64_t> read_u64_fact(const RootFs& fs, const std::string& path) {
    return read_parsed_fact<uint64_t>(fs, path, [](const std::string& t) -> Result<uint64_t> {
        if (auto v = parse_u64(t)) return *v;
        return not_a("a non-negative integer", t);
    });
}

Fact<uint64_t> read_hex_fact(const RootFs& fs, const std::string& path) {
    return read_parsed_fact<uint64_t>(fs, path, [](const std::string& t) -> Result<uint64_t> {
        if (auto v = parse_hex(t)) return *v;
        return not_a("a hexadecimal number", t);
    });
}

}  // namespace trainrig

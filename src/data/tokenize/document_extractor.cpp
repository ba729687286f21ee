#include "data/tokenize/document_extractor.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "core/text.h"
#include "data/tokenizer/utf8.h"

namespace trainrig::data {

static_assert(DocumentExtractor::kJsonPadding >= simdjson::SIMDJSON_PADDING);

namespace {
constexpr size_t kParserCapacityMax = size_t{16} << 20;
}  // namespace

Result<TextTemplate> TextTemplate::parse(std::string_view spec) {
    TextTemplate t;
    std::string literal;
    const auto flush = [&] {
        if (!literal.empty()) t.parts.push_back({false, std::move(literal)});
        literal.clear();
    };
    for (size_t i = 0; i < spec.size(); ++i) {
        const char c = spec[i];
        if (c == '\\' && i + 1 < spec.size()) {
            const char e = spec[i + 1];
            if (e == 'n' || e == 't' || e == '\\') {
                literal += e == 'n' ? '\n' : e == 't' ? '\t' : '\\';
                ++i;
                continue;
            }
        }
        if ((c == '{' || c == '}') && i + 1 < spec.size() && spec[i + 1] == c) {
            literal += c;
            ++i;
            continue;
        }
        if (c == '}')
            return Status{Errc::kInvalidInput,
                          fmt::format("--template has an unmatched '}}' at character {}", i + 1)};
        if (c != '{') {
            literal += c;
            continue;
        }
        const size_t close = spec.find('}', i + 1);
        const std::string_view key = close == std::string_view::npos
                                         ? std::string_view()
                                         : trim(spec.substr(i + 1, close - i - 1));
        if (key.empty())
            return Status{
                Errc::kInvalidInput,
                fmt::format("--template has an unclosed or empty '{{' at character {}", i + 1)};
        flush();
        t.parts.push_back({true, std::string(key)});
        i = close;
    }
    flush();
    if (t.fields().empty())
        return Status{Errc::kInvalidInput, "--template names no field (write fields as {name})"};
    return t;
}

TextTemplate TextTemplate::single_key(std::string key) {
    TextTemplate t;
    t.parts.push_back({true, std::move(key)});
    return t;
}

std::vector<std::string> TextTemplate::fields() const {
    std::vector<std::string> out;
    for (const auto& p : parts)
        if (p.field) out.push_back(p.text);
    return out;
}

struct DocumentExtractor::Parser {
    simdjson::dom::parser json;
};

DocumentExtractor::DocumentExtractor(InputFormat format, TextTemplate tmpl)
    : format_(format), template_(std::move(tmpl)), parser_(std::make_unique<Parser>()) {}

DocumentExtractor::~DocumentExtractor() = default;

namespace {

std::string_view type_name(simdjson::dom::element_type t) {
    using T = simdjson::dom::element_type;
    switch (t) {
        case T::ARRAY:
            return "a list";
        case T::OBJECT:
            return "an object";
        case T::INT64:
        case T::UINT64:
        case T::DOUBLE:
            return "a number";
        case T::BOOL:
            return "a boolean";
        case T::NULL_VALUE:
            return "null";
        case T::STRING:
            return "a string";
    }
    return "something else";
}

Result<std::string_view> field(simdjson::dom::element root, const std::string& path) {
    simdjson::dom::element e = root;
    for (const std::string_view part : split(path, '.')) {
        if (e.is_object()) {
            auto next = e.get_object().value_unsafe().at_key(part);
            if (next.error() != simdjson::SUCCESS)
                return Status{Errc::kInvalidInput, fmt::format("has no key {:?}", path)};
            e = next.value_unsafe();
        } else if (e.is_array()) {
            const auto index = parse_u64(part);
            auto next = index ? e.get_array().value_unsafe().at(*index)
                              : simdjson::simdjson_result<simdjson::dom::element>(
                                    simdjson::INDEX_OUT_OF_BOUNDS);
            if (next.error() != simdjson::SUCCESS)
                return Status{Errc::kInvalidInput,
                              fmt::format("has no element {:?} in {:?}", part, path)};
            e = next.value_unsafe();
        } else {
            return Status{Errc::kInvalidInput, fmt::format("has no key {:?} ({} is in the way)",
                                                           path, type_name(e.type()))};
        }
    }
    if (!e.is_string())
        return Status{Errc::kInvalidInput,
                      fmt::format("has {} at {:?}, not a string", type_name(e.type()), path)};
    return e.get_string().value_unsafe();
}

}  // namespace

Result<std::string_view> DocumentExtractor::extract(std::string_view record, std::string& storage) {
    if (format_ != InputFormat::kJsonl) {
        if (!is_valid_utf8(record))
            return Status{Errc::kInvalidInput, fmt::format("is not valid UTF-8 (byte {})",
                                                           first_invalid_utf8(record) + 1)};
        return record;
    }
    // The DOM parser keeps ~14 bytes per byte of the largest record it has seen; after a huge
    // line, start over rather than hold that for the rest of the run.
    if (parser_->json.capacity() > kParserCapacityMax && record.size() < kParserCapacityMax)
        parser_ = std::make_unique<Parser>();
    simdjson::dom::element root;
    if (const auto err = parser_->json.parse(record.data(), record.size(), false).get(root);
        err != simdjson::SUCCESS) {
        if (err == simdjson::UTF8_ERROR) return Status{Errc::kInvalidInput, "is not valid UTF-8"};
        return Status{Errc::kInvalidInput,
                      fmt::format("is not valid JSON ({})", simdjson::error_message(err))};
    }
    if (template_.parts.size() == 1 && template_.parts[0].field)
        return field(root, template_.parts[0].text);
    storage.clear();
    for (const auto& p : template_.parts) {
        if (!p.field) {
            storage += p.text;
            continue;
        }
        auto v = field(root, p.text);
        if (!v) return v.status();
        storage += *v;
    }
    return std::string_view(storage);
}

}  // namespace trainrig::data

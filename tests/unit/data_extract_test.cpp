// From input records to document text: --template parsing, dotted paths into JSON lines, and
// the one-phrase errors `data tokenize` prefixes with the file and line.
#include <gtest/gtest.h>

#include "data/tokenize/document_extractor.h"
#include "has_text.h"

namespace trainrig::data {
namespace {

// ---------------------------------------------------------------------------------------------
// --template

using Part = TextTemplate::Part;

std::vector<std::pair<bool, std::string>> parts_of(std::string_view spec) {
    auto t = TextTemplate::parse(spec);
    EXPECT_TRUE(t) << t.status().message();
    std::vector<std::pair<bool, std::string>> out;
    if (t)
        for (const Part& p : t->parts) out.emplace_back(p.field, p.text);
    return out;
}

using Parts = std::vector<std::pair<bool, std::string>>;

std::string template_error(std::string_view spec) {
    auto t = TextTemplate::parse(spec);
    EXPECT_FALSE(t) << spec;
    return t ? std::string() : t.status().message();
}

TEST(DataTemplate, FieldsAndLiteralsAlternate) {
    EXPECT_EQ(parts_of("{a}\\n{b.c}"), (Parts{{true, "a"}, {false, "\n"}, {true, "b.c"}}));
    EXPECT_EQ(parts_of("Q: {q}"), (Parts{{false, "Q: "}, {true, "q"}}));
    auto t = TextTemplate::parse("{instruction}\\n\\n{input}\\n\\n{output}");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->fields(), (std::vector<std::string>{"instruction", "input", "output"}));
}

TEST(DataTemplate, BackslashEscapesAreUnderstood) {
    // Shells pass "\n" through as two characters; \n, \t and \\ are read as one.
    EXPECT_EQ(parts_of("{a}\\t\\\\{b}"), (Parts{{true, "a"}, {false, "\t\\"}, {true, "b"}}));
    // Any other backslash stays as written.
    EXPECT_EQ(parts_of("{a}\\x"), (Parts{{true, "a"}, {false, "\\x"}}));
}

TEST(DataTemplate, DoubledBracesAreLiteral) {
    EXPECT_EQ(parts_of("{{{a}}}"), (Parts{{false, "{"}, {true, "a"}, {false, "}"}}));
    EXPECT_EQ(parts_of("{{x}}: {a}"), (Parts{{false, "{x}: "}, {true, "a"}}));
}

TEST(DataTemplate, FieldNamesAreTrimmed) { EXPECT_EQ(parts_of("{ a }"), (Parts{{true, "a"}})); }

TEST(DataTemplate, UnclosedBraceIsRefusedWithItsPosition) {
    const auto m = template_error("ab{c");
    EXPECT_TRUE(has(m, "unclosed or empty '{' at character 3")) << m;
}

TEST(DataTemplate, EmptyFieldIsRefused) {
    const auto m = template_error("x{}");
    EXPECT_TRUE(has(m, "unclosed or empty '{' at character 2")) << m;
    EXPECT_TRUE(has(template_error("{  }"), "at character 1"));
}

TEST(DataTemplate, StrayClosingBraceIsRefused) {
    const auto m = template_error("{a} b}");
    EXPECT_TRUE(has(m, "unmatched '}' at character 6")) << m;
}

TEST(DataTemplate, TemplateWithoutFieldsIsRefused) {
    EXPECT_TRUE(has(template_error("just text"), "names no field"));
    EXPECT_TRUE(has(template_error("{{a}}"), "names no field"));  // literal braces only
    EXPECT_TRUE(has(template_error(""), "names no field"));
}

// ---------------------------------------------------------------------------------------------
// JSON lines

// Extracts from `line` with the kJsonPadding readable bytes after it that simdjson needs.
Result<std::string> extract(DocumentExtractor& x, std::string_view line) {
    std::string padded(line);
    padded.append(DocumentExtractor::kJsonPadding, ' ');
    std::string storage;
    auto r = x.extract(std::string_view(padded.data(), line.size()), storage);
    if (!r) return r.status();
    return std::string(*r);
}

std::string json_field(std::string_view line, std::string key) {
    DocumentExtractor x(InputFormat::kJsonl, TextTemplate::single_key(std::move(key)));
    auto r = extract(x, line);
    EXPECT_TRUE(r) << r.status().message();
    return r ? *r : std::string();
}

std::string json_error(std::string_view line, std::string key) {
    DocumentExtractor x(InputFormat::kJsonl, TextTemplate::single_key(std::move(key)));
    auto r = extract(x, line);
    EXPECT_FALSE(r) << line;
    return r ? std::string() : r.status().message();
}

TEST(DataExtract, TopLevelKey) {
    EXPECT_EQ(json_field(R"({"id": 1, "text": "hello world"})", "text"), "hello world");
    EXPECT_EQ(json_field(R"({"text": ""})", "text"), "");
}

TEST(DataExtract, JsonEscapesAreDecoded) {
    EXPECT_EQ(json_field(R"({"text": "caf\u00e9\nline \ud83d\ude00 \"q\""})", "text"),
              "café\nline 😀 \"q\"");
}

TEST(DataExtract, DottedPathIntoObjectsAndArrays) {
    EXPECT_EQ(json_field(R"({"meta": {"text": "inner"}})", "meta.text"), "inner");
    const std::string chat =
        R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]})";
    EXPECT_EQ(json_field(chat, "messages.0.content"), "q");
    EXPECT_EQ(json_field(chat, "messages.1.content"), "a");
    EXPECT_EQ(json_field(R"({"a": [["x", "y"]]})", "a.0.1"), "y");
}

TEST(DataExtract, MissingKeyNamesThePath) {
    EXPECT_EQ(json_error(R"({"txt": "x"})", "text"), "has no key \"text\"");
    EXPECT_EQ(json_error(R"({"meta": {}})", "meta.text"), "has no key \"meta.text\"");
}

TEST(DataExtract, ArrayIndexOutOfRangeOrNotANumber) {
    const std::string chat = R"({"messages": [{"content": "q"}, {"content": "a"}]})";
    EXPECT_EQ(json_error(chat, "messages.2.content"),
              "has no element \"2\" in \"messages.2.content\"");
    EXPECT_EQ(json_error(chat, "messages.last.content"),
              "has no element \"last\" in \"messages.last.content\"");
}

TEST(DataExtract, ScalarInTheWayOfAPath) {
    EXPECT_EQ(json_error(R"({"meta": "s"})", "meta.text"),
              "has no key \"meta.text\" (a string is in the way)");
    EXPECT_EQ(json_error(R"({"meta": 3})", "meta.text"),
              "has no key \"meta.text\" (a number is in the way)");
}

TEST(DataExtract, NonStringValueNamesItsType) {
    EXPECT_EQ(json_error(R"({"text": 5})", "text"), "has a number at \"text\", not a string");
    EXPECT_EQ(json_error(R"({"text": 2.5})", "text"), "has a number at \"text\", not a string");
    EXPECT_EQ(json_error(R"({"text": null})", "text"), "has null at \"text\", not a string");
    EXPECT_EQ(json_error(R"({"text": {"a": "b"}})", "text"),
              "has an object at \"text\", not a string");
    EXPECT_EQ(json_error(R"({"text": ["a"]})", "text"), "has a list at \"text\", not a string");
    EXPECT_EQ(json_error(R"({"text": true})", "text"), "has a boolean at \"text\", not a string");
}

TEST(DataExtract, MalformedJsonIsRefused) {
    EXPECT_TRUE(has(json_error(R"({"text": "abc")", "text"), "is not valid JSON ("));
    EXPECT_TRUE(has(json_error(R"({"text": abc})", "text"), "is not valid JSON ("));
    EXPECT_TRUE(has(json_error("", "text"), "is not valid JSON ("));
}

TEST(DataExtract, TrailingContentAfterTheRecordIsRefused) {
    EXPECT_TRUE(has(json_error(R"({"text": "a"} {"text": "b"})", "text"), "is not valid JSON"));
}

TEST(DataExtract, InvalidUtf8InsideAJsonStringIsRefused) {
    EXPECT_EQ(json_error("{\"text\": \"ab\xFF\"}", "text"), "is not valid UTF-8");
    EXPECT_EQ(json_error("{\"text\": \"\xED\xA0\x80\"}", "text"), "is not valid UTF-8");
}

TEST(DataExtract, TemplateJoinsFields) {
    auto t = TextTemplate::parse("{instruction}\\n\\n{input.0}: {output}");
    ASSERT_TRUE(t);
    DocumentExtractor x(InputFormat::kJsonl, std::move(t).value());
    auto r = extract(x, R"({"instruction": "Add", "input": ["1+1"], "output": "2"})");
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(*r, "Add\n\n1+1: 2");
    // The same extractor on the next record: nothing carries over.
    auto s = extract(x, R"({"instruction": "Say", "input": ["hi"], "output": "hi"})");
    ASSERT_TRUE(s) << s.status().message();
    EXPECT_EQ(*s, "Say\n\nhi: hi");
}

TEST(DataExtract, TemplateWithAMissingFieldIsRefused) {
    auto t = TextTemplate::parse("{instruction}\\n{output}");
    ASSERT_TRUE(t);
    DocumentExtractor x(InputFormat::kJsonl, std::move(t).value());
    auto r = extract(x, R"({"instruction": "Add"})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message(), "has no key \"output\"");
}

TEST(DataExtract, ExtractorIsReusableAcrossRecords) {
    DocumentExtractor x(InputFormat::kJsonl, TextTemplate::single_key("text"));
    EXPECT_EQ(*extract(x, R"({"text": "first"})"), "first");
    EXPECT_FALSE(extract(x, R"({"text": 1})"));
    EXPECT_EQ(*extract(x, R"({"text": "third"})"), "third");
}

// ---------------------------------------------------------------------------------------------
// Plain lines and text

TEST(DataExtract, LinesAreTheirOwnText) {
    for (const auto format : {InputFormat::kLines, InputFormat::kText}) {
        DocumentExtractor x(format, TextTemplate::single_key("text"));
        const std::string record = "a plain line, {not json}";
        std::string storage;
        auto r = x.extract(record, storage);
        ASSERT_TRUE(r) << r.status().message();
        EXPECT_EQ(*r, record);
        EXPECT_EQ(r->data(), record.data());  // a view of the record, not a copy
    }
}

TEST(DataExtract, LinesRejectInvalidUtf8WithTheBytePosition) {
    // The position is 1-based, like the line numbers it is shown with.
    for (const auto format : {InputFormat::kLines, InputFormat::kText}) {
        DocumentExtractor x(format, TextTemplate::single_key("text"));
        std::string storage;
        auto r = x.extract("ab\xFF", storage);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.status().message(), "is not valid UTF-8 (byte 3)");
        auto s = x.extract("é\xC0\xAF", storage);  // overlong after a 2-byte character
        ASSERT_FALSE(s);
        EXPECT_EQ(s.status().message(), "is not valid UTF-8 (byte 3)");
    }
}

}  // namespace
}  // namespace trainrig::data

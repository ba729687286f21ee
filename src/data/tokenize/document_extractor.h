// Turning one input record into the text of one document: a JSON line's field (a dotted path,
// "meta.text" or "messages.0.content"), several fields joined by a template (instruction data),
// or a line of plain text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::data {

enum class InputFormat { kJsonl, kLines, kText };

// "{instruction}\n\n{input}" -> literal and field parts. `{{` and `}}` are literal braces;
// the escapes \n, \t and \\ are understood, since shells pass them through as two characters.
struct TextTemplate {
    struct Part {
        bool field = false;
        std::string text;  // literal text, or the dotted path of a field
    };
    std::vector<Part> parts;

    static Result<TextTemplate> parse(std::string_view spec);
    static TextTemplate single_key(std::string key);
    std::vector<std::string> fields() const;
};

class DocumentExtractor {
public:
    DocumentExtractor(InputFormat format, TextTemplate tmpl);
    ~DocumentExtractor();
    DocumentExtractor(const DocumentExtractor&) = delete;
    DocumentExtractor& operator=(const DocumentExtractor&) = delete;

    // The document text of one record. For JSON, `record` must be followed by at least
    // kJsonPadding readable bytes. The result may point into `record` or into `storage`.
    // Errors are one phrase without the location ("has no key \"text\"").
    Result<std::string_view> extract(std::string_view record, std::string& storage);

    static constexpr size_t kJsonPadding = 64;

private:
    InputFormat format_;
    TextTemplate template_;
    struct Parser;
    std::unique_ptr<Parser> parser_;
};

}  // namespace trainrig::data

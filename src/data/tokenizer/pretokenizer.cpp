#include "data/tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <vector>

namespace trainrig::data {

namespace {

// The rewritten pattern, and for each of its bytes the offset in the pattern as written (so a
// compile error points at what the user wrote).
struct Translated {
    std::string text;
    std::vector<size_t> origin;
    void add(std::string_view s, size_t from) {
        text += s;
        origin.insert(origin.end(), s.size(), from);
    }
};

Translated translate(std::string_view p) {
    Translated out;
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
        const size_t at = i;
        const char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            const char e = p[++i];
            if (e == 's') {
                out.add(in_class ? "\\s\\x{85}" : "[\\s\\x{85}]", at);
            } else if (e == 'S') {
                // Inside a class `\S` cannot be widened by listing; none of the tokenizer
                // patterns use it there, so it is left as PCRE2 reads it.
                out.add(in_class ? "\\S" : "[^\\s\\x{85}]", at);
            } else {
                out.add(p.substr(at, 2), at);
            }
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out.add("[", at);
            // A ']' (or '^]') right after '[' is a literal member, not the end.
            if (i + 1 < p.size() && p[i + 1] == '^') out.add("^", ++i);
            if (i + 1 < p.size() && p[i + 1] == ']') out.add("]", ++i);
            continue;
        }
        if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
            // A POSIX class ([:digit:]) inside a bracket: its ']' does not end the bracket.
            const size_t end = p.find(":]", i + 2);
            if (end != std::string_view::npos) {
                out.add(p.substr(i, end + 2 - i), at);
                i = end + 1;
                continue;
            }
        }
        if (in_class && c == ']') in_class = false;
        out.add(std::string_view(&p[i], 1), at);
    }
    return out;
}

}  // namespace

std::string pcre2_pattern(std::string_view p) { return translate(p).text; }

Result<std::shared_ptr<const Pretokenizer>> Pretokenizer::compile(std::string_view pattern) {
    std::shared_ptr<Pretokenizer> re(new Pretokenizer());
    re->pattern_ = std::string(pattern);
    const Translated t = translate(pattern);
    const std::string& translated = t.text;
    int err = 0;
    PCRE2_SIZE offset = 0;
    // DOLLAR_ENDONLY: `$` is the end of the text, as in Rust's regex, not also before a final
    // newline.
    re->code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &offset, nullptr);
    if (re->code_ == nullptr) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return Status{Errc::kInvalidInput,
                      fmt::format("the pre-tokenizer pattern does not compile at offset {}: {}",
                                  offset < t.origin.size() ? t.origin[offset] : pattern.size(),
                                  reinterpret_cast<const char*>(buf))};
    }
    re->jit_ = pcre2_jit_compile(re->code_, PCRE2_JIT_COMPLETE) == 0;
    return std::shared_ptr<const Pretokenizer>(std::move(re));
}

Pretokenizer::~Pretokenizer() { pcre2_code_free(code_); }

Pretokenizer::Cursor::Cursor(std::shared_ptr<const Pretokenizer> re) : re_(std::move(re)) {
    match_ = pcre2_match_data_create_from_pattern(re_->code_, nullptr);
    context_ = pcre2_match_context_create(nullptr);
    if (re_->jit_) {
        // Long runs of whitespace make `\s+(?!\S)` backtrack; give the JIT room for them.
        stack_ = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
        pcre2_jit_stack_assign(context_, nullptr, stack_);
    }
}

Pretokenizer::Cursor::~Cursor() {
    pcre2_match_data_free(match_);
    pcre2_match_context_free(context_);
    if (stack_ != nullptr) pcre2_jit_stack_free(stack_);
}

bool Pretokenizer::Cursor::next(std::string_view text, size_t from, size_t& start, size_t& end) {
    while (from < text.size()) {
        const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        const int rc =
            re_->jit_ ? pcre2_jit_match(re_->code_, subject, text.size(), from, 0, match_, context_)
                      : pcre2_match(re_->code_, subject, text.size(), from, PCRE2_NO_UTF_CHECK,
                                    match_, context_);
        if (rc == PCRE2_ERROR_NOMATCH) return false;
        if (rc < 0) {
            PCRE2_UCHAR buf[256];
            pcre2_get_error_message(rc, buf, sizeof buf);
            status_ =
                Status{Errc::kInvalidInput, fmt::format("pre-tokenizing failed at byte {}: {}",
                                                        from, reinterpret_cast<const char*>(buf))};
            return false;
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match_);
        start = ov[0];
        end = ov[1];
        if (end > start) return true;
        // An empty match (no shipped pattern has one) would never advance; step one character.
        from = start + 1;
        while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80)
            ++from;
    }
    return false;
}

}  // namespace trainrig::data

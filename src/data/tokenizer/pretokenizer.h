// Pre-tokenization: the regular expression that cuts text into pieces before BPE, compiled with
// PCRE2 (Unicode properties, JIT). Pieces are the successive non-overlapping matches, as
// Python's/Rust's find-all yields them; text between matches is dropped, as tiktoken does.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_jit_stack_8;
struct pcre2_real_match_context_8;

namespace trainrig::data {

// Rust's and Python's `\s` is Unicode White_Space, which includes U+0085 (NEXT LINE); PCRE2's
// `\s` under PCRE2_UCP is Z plus ASCII space controls and leaves it out. This rewrites `\s` and
// `\S` (inside and outside classes) so the pattern means what the reference tokenizers mean.
std::string pcre2_pattern(std::string_view pattern);

class Pretokenizer {
public:
    static Result<std::shared_ptr<const Pretokenizer>> compile(std::string_view pattern);
    ~Pretokenizer();
    Pretokenizer(const Pretokenizer&) = delete;
    Pretokenizer& operator=(const Pretokenizer&) = delete;

    const std::string& pattern() const { return pattern_; }

    // Per-thread match state. `text` must be valid UTF-8 (checked by the caller).
    class Cursor {
    public:
        explicit Cursor(std::shared_ptr<const Pretokenizer> re);
        ~Cursor();
        Cursor(const Cursor&) = delete;
        Cursor& operator=(const Cursor&) = delete;

        // Finds the next piece at or after `from`; false at the end. Errors (a pattern that
        // runs out of JIT stack) are reported through `status`.
        bool next(std::string_view text, size_t from, size_t& start, size_t& end);
        const Status& status() const { return status_; }
        void clear_status() { status_ = Status(); }

    private:
        std::shared_ptr<const Pretokenizer> re_;
        pcre2_real_match_data_8* match_ = nullptr;
        pcre2_real_match_context_8* context_ = nullptr;
        pcre2_real_jit_stack_8* stack_ = nullptr;
        Status status_;
    };

private:
    Pretokenizer() = default;
    std::string pattern_;
    pcre2_real_code_8* code_ = nullptr;
    bool jit_ = false;
};

}  // namespace trainrig::data

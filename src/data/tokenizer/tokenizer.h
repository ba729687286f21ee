// The tokenizer interface `data tokenize`, `data inspect` and `bench tokenizer` use. A Tokenizer
// is immutable and shared across threads; each thread encodes through its own TokenEncoder,
// which owns the mutable state (regex match data, piece cache).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::data {

class TokenEncoder {
public:
    virtual ~TokenEncoder() = default;
    // Appends the ids of `text` to `out`. Text that is not valid UTF-8 is first repaired as
    // data/tokenizer/utf8.h describes. Fails only on a pattern error (JIT stack exhausted).
    virtual Status encode(std::string_view text, std::vector<uint32_t>& out) = 0;
};

struct SpecialToken {
    std::string text;
    uint32_t id = 0;
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // `allow_special`: special-token strings in the text become their ids; otherwise they are
    // encoded as ordinary text (tiktoken's encode_ordinary; Megatron's preprocessing).
    virtual std::unique_ptr<TokenEncoder> encoder(bool allow_special) const = 0;

    // The bytes of the ids, concatenated (special tokens as their text). Ids outside the
    // vocabulary are an error naming the first one.
    virtual Result<std::string> decode(std::span<const uint32_t> ids) const = 0;

    // One past the largest id (what sizes an embedding table and picks the token dtype).
    virtual size_t vocab_size() const = 0;
    // End-of-document token appended by --append-eod, if the vocabulary has one.
    virtual std::optional<uint32_t> eod() const = 0;
    virtual const std::vector<SpecialToken>& special_tokens() const = 0;

    // How the tokenizer was found ("gpt2 (files in /x)", "tokenizer.json at /y").
    const std::string& description() const { return description_; }
    void set_description(std::string d) { description_ = std::move(d); }
    // The preset name, or the kind of file ("tiktoken", "hf-bpe", "sentencepiece").
    const std::string& kind() const { return kind_; }
    void set_kind(std::string k) { kind_ = std::move(k); }

    // Convenience for tests and one-off calls (makes a fresh encoder each time).
    Result<std::vector<uint32_t>> encode(std::string_view text, bool allow_special = false) const;

private:
    std::string description_;
    std::string kind_;
};

}  // namespace trainrig::data

// Fuzz targets for `data`: the JSONL record extractor and the BPE tokenizer on arbitrary bytes,
// shared by the libFuzzer harness (data_fuzzer.cpp) and the randomized GoogleTest in every CI
// build. Properties: no crash or hang; extracted text is valid UTF-8; decode(encode(x)) equals
// x with invalid UTF-8 repaired, for every preset's pre-tokenizer regex.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenize/document_extractor.h"
#include "data/tokenizer/bpe_tokenizer.h"
#include "data/tokenizer/presets.h"
#include "data/tokenizer/utf8.h"

namespace trainrig::fuzz {

// A small byte-level vocabulary: the 256 bytes, then merges that real text hits (English, code,
// CJK in UTF-8), so the merge loops run.
inline std::vector<std::shared_ptr<const data::Tokenizer>> make_fuzz_tokenizers() {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    for (const char* t :
         {"th",           "he",   "the",  " t", " the",     "in",           "ing",
          "  ",           "    ", "\n\n", "er", "\xe4\xbd", "\xe4\xbd\xa0", "\xe5\xa5",
          "\xe5\xa5\xbd", "12",   "123",  "'s", "aa",       "aaaa",         "{\"",
          "\":",          " {",   "<|",   "|>"})
        tokens.emplace_back(t);
    std::vector<std::shared_ptr<const data::Tokenizer>> out;
    for (const auto& preset : data::presets()) {
        auto model = data::BpeModel::from_ranks(tokens, "fuzz vocabulary");
        if (!model) throw std::runtime_error(model.status().message());
        data::BpeOptions o;
        o.pattern = preset.pattern;
        o.specials = {{"<|endoftext|>", static_cast<uint32_t>(tokens.size())}};
        o.eod = static_cast<uint32_t>(tokens.size());
        auto t = data::make_bpe_tokenizer(std::move(model).value(), o);
        if (!t) throw std::runtime_error(t.status().message());
        out.push_back(*t);
    }
    return out;
}

inline void data_one_input(const uint8_t* bytes, size_t size) {
    static const auto tokenizers = make_fuzz_tokenizers();
    const std::string_view in(reinterpret_cast<const char*>(bytes), size);

    // JSONL record (padded as the pipeline pads it), through a field and a template.
    std::string padded(in);
    padded.append(data::DocumentExtractor::kJsonPadding, '\0');
    const std::string_view record(padded.data(), in.size());
    std::string storage;
    data::DocumentExtractor by_key(data::InputFormat::kJsonl,
                                   data::TextTemplate::single_key("text"));
    if (auto t = by_key.extract(record, storage); t.ok() && !data::is_valid_utf8(*t))
        throw std::runtime_error("extracted text is not valid UTF-8");
    auto tmpl = data::TextTemplate::parse("{a.b}\\n{c.0}");
    data::DocumentExtractor joined(data::InputFormat::kJsonl, *tmpl);
    (void)joined.extract(record, storage);
    data::DocumentExtractor lines(data::InputFormat::kLines, *tmpl);
    (void)lines.extract(record, storage);

    // Tokenizer round trip on the raw bytes.
    const std::string expected = data::repair_utf8(in);
    for (const auto& t : tokenizers) {
        for (const bool special : {false, true}) {
            std::vector<uint32_t> ids;
            if (auto s = t->encoder(special)->encode(in, ids); !s.ok())
                throw std::runtime_error(s.message());
            auto back = t->decode(ids);
            if (!back || *back != expected)
                throw std::runtime_error("decode(encode(x)) differs from x");
        }
    }
}

}  // namespace trainrig::fuzz

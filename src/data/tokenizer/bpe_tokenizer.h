// A byte-level BPE tokenizer: pre-tokenizer regex + BPE model + special tokens. All the
// tiktoken, GPT-2 and Hugging Face byte-level loaders build one of these.
#pragma once

#include <memory>

#include "data/tokenizer/bpe_model.h"
#include "data/tokenizer/pretokenizer.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

struct BpeOptions {
    std::string kind;                    // see Tokenizer::kind()
    std::string description;             // see Tokenizer::description()
    std::string pattern;                 // pre-tokenizer regex
    std::vector<SpecialToken> specials;  // ids may lie above the model's tokens
    std::optional<uint32_t> eod;
    bool add_prefix_space = false;  // tokenizers' ByteLevel(add_prefix_space=true)
    bool nfc = false;               // tokenizers' NFC normalizer (Qwen2)
};

Result<std::shared_ptr<const Tokenizer>> make_bpe_tokenizer(BpeModel model, BpeOptions options);

}  // namespace trainrig::data

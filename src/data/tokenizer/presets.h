// The named tokenizers: pre-tokenizer regexes, special tokens and where their files are looked
// up. Regexes are those of openai/tiktoken tiktoken_ext/openai_public.py (r50k_base/gpt2,
// cl100k_base, o200k_base) and meta-llama/llama3 llama/tokenizer.py.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

struct Preset {
    std::string_view name;
    std::string_view pattern;
    std::vector<SpecialToken> specials;
    uint32_t eod = 0;
    size_t ranks = 0;                     // ordinary tokens in the published file
    std::vector<std::string_view> files;  // relative to the tokenizer folder, first found wins
};

std::span<const Preset> presets();
const Preset* find_preset(std::string_view name);
const Preset* preset_for_rank_count(size_t ranks);

// Where preset files are looked up: $TRAINRIG_TOKENIZERS, else ~/.cache/trainrig/tokenizers.
std::string tokenizer_folder();

}  // namespace trainrig::data

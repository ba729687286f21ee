#include "data/tokenizer/presets.h"

#include <fmt/format.h>

#include <cstdlib>

namespace trainrig::data {
namespace {

std::vector<SpecialToken> llama3_specials() {
    // Llama 3.1's names (meta-llama/llama-models, also shipped by llama3-tokenizer-js); the ids
    // of begin/end of text, the header markers and <|eot_id|> are those of Llama 3.
    std::vector<std::string> names = {"<|begin_of_text|>",
                                      "<|end_of_text|>",
                                      "<|reserved_special_token_0|>",
                                      "<|reserved_special_token_1|>",
                                      "<|finetune_right_pad_id|>",
                                      "<|reserved_special_token_2|>",
                                      "<|start_header_id|>",
                                      "<|end_header_id|>",
                                      "<|eom_id|>",
                                      "<|eot_id|>",
                                      "<|python_tag|>"};
    for (int i = 3; i <= 247; ++i) names.push_back(fmt::format("<|reserved_special_token_{}|>", i));
    std::vector<SpecialToken> out;
    for (size_t i = 0; i < names.size(); ++i)
        out.push_back({names[i], static_cast<uint32_t>(128000 + i)});
    return out;
}

const std::vector<Preset>& table() {
    static const std::vector<Preset> t = {
        {"gpt2",
         R"('(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s)",
         {{"<|endoftext|>", 50256}},
         50256,
         50256,
         {"gpt2", "gpt2.tiktoken", "r50k_base.tiktoken"}},
        {"cl100k",
         R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s)",
         {{"<|endoftext|>", 100257},
          {"<|fim_prefix|>", 100258},
          {"<|fim_middle|>", 100259},
          {"<|fim_suffix|>", 100260},
          {"<|endofprompt|>", 100276}},
         100257,
         100256,
         {"cl100k_base.tiktoken"}},
        {"o200k",
         R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
         {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}},
         199999,
         199998,
         {"o200k_base.tiktoken"}},
        {"llama3",
         R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
         llama3_specials(),
         128001,
         128000,
         {"llama3.tiktoken", "llama3/tokenizer.model"}},
    };
    return t;
}

}  // namespace

std::span<const Preset> presets() { return table(); }

const Preset* find_preset(std::string_view name) {
    for (const auto& p : table())
        if (p.name == name) return &p;
    if (name == "cl100k_base") return find_preset("cl100k");
    if (name == "o200k_base") return find_preset("o200k");
    if (name == "r50k_base") return find_preset("gpt2");
    return nullptr;
}

const Preset* preset_for_rank_count(size_t ranks) {
    for (const auto& p : table())
        if (p.ranks == ranks) return &p;
    return nullptr;
}

std::string tokenizer_folder() {
    if (const char* env = std::getenv("TRAINRIG_TOKENIZERS"); env != nullptr && *env != '\0')
        return env;
    const char* home = std::getenv("HOME");
    return fmt::format("{}/.cache/trainrig/tokenizers", home != nullptr ? home : "");
}

}  // namespace trainrig::data

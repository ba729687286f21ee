// GPT-2's released files (openai/gpt-2 download_model.py): encoder.json maps byte-level token
// strings to ids; vocab.bpe lists the merges, highest priority first, after a "#version" line.
#include <fmt/format.h>
#include <simdjson.h>

#include "core/text.h"
#include "core/user_file.h"
#include "data/tokenizer/bpe_tokenizer.h"
#include "data/tokenizer/byte_level.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/presets.h"

namespace trainrig::data {

Result<std::shared_ptr<const Tokenizer>> load_gpt2_folder(const std::string& dir) {
    const std::string encoder_path = dir + "/encoder.json";
    const std::string merges_path = dir + "/vocab.bpe";
    auto encoder = read_user_file(encoder_path, "--tokenizer");
    if (!encoder) return encoder.status();
    auto merges_text = read_user_file(merges_path, "--tokenizer");
    if (!merges_text) return merges_text.status();
    const Preset& preset = *find_preset("gpt2");

    simdjson::dom::parser parser;
    simdjson::dom::object obj;
    if (parser.parse(*encoder).get(obj) != simdjson::SUCCESS)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not a JSON object of token -> id", encoder_path)};
    std::vector<std::string> tokens;
    std::optional<uint32_t> eod;
    for (auto [key, value] : obj) {
        int64_t id = -1;
        if (value.get(id) != simdjson::SUCCESS || id < 0 || id >= (1 << 24))
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: the id of {:?} is not a small non-negative integer",
                                      encoder_path, std::string_view(key))};
        // <|endoftext|> is listed among the tokens but is a special token, never merged into;
        // its id is whatever this encoder.json says (50256 in GPT-2's own file).
        if (key == "<|endoftext|>") {
            eod = static_cast<uint32_t>(id);
            continue;
        }
        auto bytes = byte_level_decode(key);
        if (!bytes)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: token {:?} is not in GPT-2's byte-level alphabet",
                                      encoder_path, std::string_view(key))};
        if (static_cast<size_t>(id) >= tokens.size()) tokens.resize(id + 1);
        tokens[id] = std::move(*bytes);
    }

    std::vector<std::pair<std::string, std::string>> merges;
    size_t line_no = 0;
    for (std::string_view line : split(*merges_text, '\n')) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
        const size_t space = line.find(' ');
        std::optional<std::string> a, b;
        if (space != std::string_view::npos &&
            line.find(' ', space + 1) == std::string_view::npos) {
            a = byte_level_decode(line.substr(0, space));
            b = byte_level_decode(line.substr(space + 1));
        }
        if (!a || !b || a->empty() || b->empty())
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {} is not a merge (`left right` in the byte-level "
                                      "alphabet)",
                                      merges_path, line_no)};
        merges.emplace_back(std::move(*a), std::move(*b));
    }
    auto model = BpeModel::from_merges(std::move(tokens), merges, false, merges_path);
    if (!model) return model.status();
    BpeOptions options;
    options.kind = "gpt2";
    options.description = fmt::format("gpt2 (encoder.json + vocab.bpe in {})", dir);
    options.pattern = preset.pattern;
    if (eod) options.specials = {{"<|endoftext|>", *eod}};
    options.eod = eod;
    return make_bpe_tokenizer(std::move(model).value(), std::move(options));
}

}  // namespace trainrig::data

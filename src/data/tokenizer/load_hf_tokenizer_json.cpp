// Hugging Face tokenizers' serialized form (tokenizer.json). Supported: model "BPE" over the
// ByteLevel alphabet, with pre_tokenizer ByteLevel (GPT-2) or Sequence[Split(regex, Isolated),
// ByteLevel(use_regex=false)] (Llama 3, Qwen2); normalizer null or NFC; added_tokens. Anything
// else is refused by name rather than encoded differently from tokenizers.
#include <fmt/format.h>
#include <simdjson.h>

#include "core/user_file.h"
#include "data/tokenizer/bpe_tokenizer.h"
#include "data/tokenizer/byte_level.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/presets.h"

namespace trainrig::data {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

Status refuse(const std::string& path, std::string_view what) {
    return {Errc::kUnsupported, fmt::format("{}: {} is not supported", path, what),
            "use a tiktoken file, GPT-2 files or a SentencePiece .model instead"};
}

std::string_view string_member(element e, const char* key) {
    std::string_view s;
    if (e[key].get(s) != simdjson::SUCCESS) return {};
    return s;
}

bool bool_member(element e, const char* key, bool fallback) {
    bool b = fallback;
    if (e[key].get(b) != simdjson::SUCCESS) return fallback;
    return b;
}

// Reads the pre-tokenizer into options.pattern / add_prefix_space.
Status read_pre_tokenizer(const std::string& path, element pre, BpeOptions& options) {
    const std::string_view type = string_member(pre, "type");
    if (type == "ByteLevel") {
        if (!bool_member(pre, "use_regex", true))
            return refuse(path, "a ByteLevel pre-tokenizer without its regex and without a Split");
        options.pattern = find_preset("gpt2")->pattern;
        options.add_prefix_space = bool_member(pre, "add_prefix_space", false);
        return ok_status();
    }
    simdjson::dom::array steps;
    if (type != "Sequence" || pre["pretokenizers"].get(steps) != simdjson::SUCCESS ||
        steps.size() != 2)
        return refuse(path, fmt::format("the pre-tokenizer {:?}", type));
    element split = steps.at(0).value_unsafe();
    element level = steps.at(1).value_unsafe();
    std::string_view regex;
    if (string_member(split, "type") != "Split" ||
        split["pattern"]["Regex"].get(regex) != simdjson::SUCCESS ||
        string_member(split, "behavior") != "Isolated" || bool_member(split, "invert", false))
        return refuse(path,
                      "a pre-tokenizer Sequence other than Split(Regex, Isolated) + "
                      "ByteLevel");
    if (string_member(level, "type") != "ByteLevel" || bool_member(level, "use_regex", true))
        return refuse(path, "a Split not followed by ByteLevel(use_regex=false)");
    options.pattern = regex;
    options.add_prefix_space = bool_member(level, "add_prefix_space", false);
    return ok_status();
}

std::optional<std::pair<std::string, std::string>> read_merge(element m) {
    std::string_view a, b;
    if (std::string_view s; m.get(s) == simdjson::SUCCESS) {
        const size_t space = s.find(' ');
        if (space == std::string_view::npos || s.find(' ', space + 1) != std::string_view::npos)
            return std::nullopt;
        a = s.substr(0, space);
        b = s.substr(space + 1);
    } else if (simdjson::dom::array pair; m.get(pair) == simdjson::SUCCESS && pair.size() == 2) {
        if (pair.at(0).get(a) != simdjson::SUCCESS || pair.at(1).get(b) != simdjson::SUCCESS)
            return std::nullopt;
    } else {
        return std::nullopt;
    }
    auto x = byte_level_decode(a);
    auto y = byte_level_decode(b);
    if (!x || !y || x->empty() || y->empty()) return std::nullopt;
    return std::make_pair(std::move(*x), std::move(*y));
}

}  // namespace

Result<std::shared_ptr<const Tokenizer>> load_hf_tokenizer_json(const std::string& path) {
    auto text = read_user_file(path, "--tokenizer");
    if (!text) return text.status();
    simdjson::dom::parser parser;
    element root;
    if (auto err = parser.parse(*text).get(root); err != simdjson::SUCCESS)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} is not valid JSON ({})", path, simdjson::error_message(err))};
    element model = root["model"].value_unsafe();
    if (root["model"].error() != simdjson::SUCCESS || string_member(model, "type") != "BPE")
        return refuse(path, "a model other than BPE");
    if (bool_member(model, "byte_fallback", false))
        return refuse(path, "a byte-fallback (SentencePiece-style) BPE model");
    if (!string_member(model, "continuing_subword_prefix").empty() ||
        !string_member(model, "end_of_word_suffix").empty())
        return refuse(path, "a BPE model with subword prefixes or suffixes");

    BpeOptions options;
    options.kind = "hf-bpe";
    options.description = fmt::format("Hugging Face tokenizer.json at {}", path);
    element normalizer = root["normalizer"].value_unsafe();
    if (root["normalizer"].error() == simdjson::SUCCESS && !normalizer.is_null()) {
        if (string_member(normalizer, "type") != "NFC")
            return refuse(path,
                          fmt::format("the normalizer {:?}", string_member(normalizer, "type")));
        options.nfc = true;
    }
    if (root["pre_tokenizer"].error() != simdjson::SUCCESS || root["pre_tokenizer"].is_null())
        return refuse(path, "a BPE model without a ByteLevel pre-tokenizer");
    TRAINRIG_TRY(read_pre_tokenizer(path, root["pre_tokenizer"].value_unsafe(), options));

    object vocab;
    if (model["vocab"].get(vocab) != simdjson::SUCCESS)
        return Status{Errc::kInvalidInput, fmt::format("{}: model.vocab is not an object", path)};
    std::vector<std::string> tokens;
    for (auto [key, value] : vocab) {
        int64_t id = -1;
        auto bytes = byte_level_decode(key);
        if (value.get(id) != simdjson::SUCCESS || id < 0 || id >= (1 << 24) || !bytes)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: model.vocab entry {:?} is not a byte-level token with "
                                      "a small non-negative id",
                                      path, std::string_view(key))};
        if (static_cast<size_t>(id) >= tokens.size()) tokens.resize(id + 1);
        tokens[id] = std::move(*bytes);
    }

    simdjson::dom::array added;
    if (root["added_tokens"].get(added) == simdjson::SUCCESS) {
        for (element a : added) {
            int64_t id = -1;
            std::string_view content;
            if (a["id"].get(id) != simdjson::SUCCESS || id < 0 ||
                a["content"].get(content) != simdjson::SUCCESS || content.empty())
                return Status{Errc::kInvalidInput,
                              fmt::format("{}: an added_tokens entry lacks id or content", path)};
            options.specials.push_back({std::string(content), static_cast<uint32_t>(id)});
            // Added tokens are matched in the text before BPE, never produced by merges.
            if (static_cast<size_t>(id) < tokens.size()) tokens[id].clear();
        }
    }
    for (const char* name : {"<|endoftext|>", "<|end_of_text|>", "</s>", "<|im_end|>"}) {
        for (const auto& s : options.specials)
            if (s.text == name && !options.eod) options.eod = s.id;
    }

    simdjson::dom::array merges_json;
    if (model["merges"].get(merges_json) != simdjson::SUCCESS)
        return Status{Errc::kInvalidInput, fmt::format("{}: model.merges is not a list", path)};
    std::vector<std::pair<std::string, std::string>> merges;
    merges.reserve(merges_json.size());
    for (element m : merges_json) {
        auto merge = read_merge(m);
        if (!merge)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: merge {} is neither \"a b\" nor [\"a\", \"b\"] in the "
                                      "byte-level alphabet",
                                      path, merges.size() + 1)};
        merges.push_back(std::move(*merge));
    }
    auto bpe = BpeModel::from_merges(std::move(tokens), merges,
                                     bool_member(model, "ignore_merges", false), path);
    if (!bpe) return bpe.status();
    return make_bpe_tokenizer(std::move(bpe).value(), std::move(options));
}

}  // namespace trainrig::data

// tiktoken's rank file: one `base64(token bytes) rank` per line (openai/tiktoken load.py,
// load_tiktoken_bpe). Meta's Llama 3 tokenizer.model is the same format.
#include <fmt/format.h>

#include <filesystem>

#include "core/text.h"
#include "core/user_file.h"
#include "data/tokenizer/bpe_tokenizer.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/presets.h"

namespace trainrig::data {
namespace {

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

std::optional<std::string> base64_decode(std::string_view in) {
    if (in.empty() || in.size() % 4 != 0) return std::nullopt;
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (size_t i = 0; i < in.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = in[i + k];
            if (c == '=' && i + 4 == in.size() && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad > 0) return std::nullopt;
            v[k] = base64_value(c);
            if (v[k] < 0) return std::nullopt;
        }
        const unsigned n = (static_cast<unsigned>(v[0]) << 18) |
                           (static_cast<unsigned>(v[1]) << 12) |
                           (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
        out.push_back(static_cast<char>(n >> 16));
        if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
        if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
    }
    return out;
}

}  // namespace

Result<std::shared_ptr<const Tokenizer>> load_tiktoken(const std::string& path,
                                                       const Preset* preset) {
    auto text = read_user_file(path, "--tokenizer");
    if (!text) return text.status();
    std::vector<std::string> tokens;
    size_t line_no = 0, count = 0;
    for (std::string_view line : split(*text, '\n')) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        const size_t space = line.find(' ');
        const auto bytes =
            space == std::string_view::npos ? std::nullopt : base64_decode(line.substr(0, space));
        const auto rank =
            space == std::string_view::npos ? std::nullopt : parse_u64(line.substr(space + 1));
        if (!bytes || !rank || *rank >= (1u << 24))
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {} is not `base64 rank` (a tiktoken rank file)",
                                      path, line_no)};
        if (*rank >= tokens.size()) tokens.resize(*rank + 1);
        if (!tokens[*rank].empty())
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {} repeats rank {}", path, line_no, *rank)};
        tokens[*rank] = std::move(*bytes);
        ++count;
    }
    if (preset == nullptr) preset = preset_for_rank_count(count);
    if (preset == nullptr)
        return Status{Errc::kInvalidInput,
                      fmt::format("{} holds {} ranks, which is none of the published encodings "
                                  "(gpt2/r50k 50256, cl100k 100256, o200k 199998, Llama 3 128000), "
                                  "so its pre-tokenizer is unknown",
                                  path, count),
                      "name the preset instead (--tokenizer cl100k) with the file in the "
                      "tokenizer folder"};
    auto model = BpeModel::from_ranks(std::move(tokens), path);
    if (!model) return model.status();
    BpeOptions options;
    options.kind = preset->name;
    options.description = fmt::format("{} (tiktoken ranks {})", preset->name, path);
    options.pattern = preset->pattern;
    options.specials = preset->specials;
    options.eod = preset->eod;
    return make_bpe_tokenizer(std::move(model).value(), std::move(options));
}

}  // namespace trainrig::data

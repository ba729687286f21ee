// What `data tokenize` reports: the progress line, the summary (text and JSON), and the
// PREFIX.meta.json it leaves beside the shards so inspect/verify know the tokenizer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/shards/token_dtype.h"
#include "data/tokenize/tokenize_pipeline.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

struct TokenizeRun {
    std::string tokenizer_spec;
    const Tokenizer* tokenizer = nullptr;
    const TokenizeOptions* options = nullptr;
    std::string format;
    TokenDtype dtype = TokenDtype::kU16;
    std::vector<std::string> files;
    TokenizeStats stats;
};

std::string progress_line(const TokenizeStats& s);
std::string render_tokenize_text(const TokenizeRun& r);
nlohmann::json tokenize_json(const TokenizeRun& r);
nlohmann::json meta_json(const TokenizeRun& r);

}  // namespace trainrig::data

// Resolving --tokenizer NAME|PATH to a tokenizer.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

// A preset name (gpt2, cl100k, o200k, llama3; files in tokenizer_folder()) or a path: a
// tokenizer.json, a tiktoken rank file, a SentencePiece .model, or a folder holding either
// encoder.json + vocab.bpe or tokenizer.json. Files are told apart by their content, not their
// name (Meta ships Llama 3's tiktoken ranks as "tokenizer.model").
Result<std::shared_ptr<const Tokenizer>> open_tokenizer(const std::string& spec);

// The spec names a preset or an existing file or folder (nothing is read): the check a command
// line gets before anything runs.
Status check_tokenizer_spec(const std::string& spec);

}  // namespace trainrig::data

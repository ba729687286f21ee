// Reading tokenizer files. Each loader names the file and line (or member) in its errors.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

struct Preset;

// A tiktoken rank file (`base64 rank` per line). Its pre-tokenizer and special tokens come from
// `preset`; without one they are recognised from the number of ranks (r50k, cl100k, o200k,
// Llama 3), and any other file is refused.
Result<std::shared_ptr<const Tokenizer>> load_tiktoken(const std::string& path,
                                                       const Preset* preset = nullptr);

// GPT-2's own files: a folder holding encoder.json and vocab.bpe.
Result<std::shared_ptr<const Tokenizer>> load_gpt2_folder(const std::string& dir);

// A Hugging Face tokenizer.json whose model is BPE over the ByteLevel alphabet (GPT-2, Llama 3,
// Qwen2 style).
Result<std::shared_ptr<const Tokenizer>> load_hf_tokenizer_json(const std::string& path);

// A SentencePiece model (Llama 2, Mistral) through libsentencepiece.
Result<std::shared_ptr<const Tokenizer>> load_sentencepiece(const std::string& path);

}  // namespace trainrig::data

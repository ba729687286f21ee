// llm.c's token shards (karpathy/llm.c dev/data/data_common.py, write_datafile): a header of
// 256 int32 (magic, version, token count, zeros) then the tokens. GPT-2: magic 20240520,
// version 1, uint16 tokens; Llama 3: magic 20240801, version 7, uint32 tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/shards/mapped_file.h"
#include "data/shards/token_dtype.h"

namespace trainrig::data {

inline constexpr int32_t kLlmcMagicGpt2 = 20240520;
inline constexpr int32_t kLlmcMagicLlama3 = 20240801;
inline constexpr size_t kLlmcHeaderBytes = 256 * 4;

// The shard files a name stands for: itself when it is a .bin file, else PREFIX_000000.bin,
// PREFIX_000001.bin, ... up to the first gap (empty when there is none).
std::vector<std::string> llmc_shard_paths(const std::string& name);
// The name of shard i of PREFIX.
std::string llmc_shard_path(const std::string& prefix, size_t i);
// i when `path` is named as shard i of some prefix (PREFIX_00000i.bin), else nullopt.
std::optional<size_t> llmc_shard_number(const std::string& path);

class LlmcShard {
public:
    static Result<LlmcShard> open(const std::string& path);
    TokenDtype dtype() const { return dtype_; }
    uint64_t tokens() const { return tokens_; }
    int64_t token(uint64_t i) const {
        return load_token(file_.bytes().data() + kLlmcHeaderBytes, i, dtype_);
    }
    const std::string& path() const { return file_.path(); }
    const unsigned char* token_bytes() const { return file_.bytes().data() + kLlmcHeaderBytes; }

private:
    MappedFile file_;
    TokenDtype dtype_ = TokenDtype::kU16;
    uint64_t tokens_ = 0;
};

}  // namespace trainrig::data

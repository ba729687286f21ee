// `data inspect` and `data verify`: what a token dataset holds and whether it is sound. Works on
// a Megatron prefix (PREFIX.idx + PREFIX.bin) or llm.c shards (a .bin file, or a prefix whose
// PREFIX_000000.bin, PREFIX_000001.bin, ... are read in order).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

struct LengthStats {
    uint64_t count = 0, min = 0, max = 0, median = 0;
    double mean = 0;
    // Power-of-two buckets: {lower bound, documents with lower <= length < 2 x lower}.
    std::vector<std::pair<uint64_t, uint64_t>> histogram;
};

struct DocumentPreview {
    uint64_t index = 0;
    uint64_t tokens = 0;
    std::vector<uint32_t> first_ids;
    std::optional<std::string> text;  // decoded (cut to max_chars), when a tokenizer is known
    std::string file;                 // llm.c: the shard shown ("" for Megatron documents)
};

struct ShardSummary {
    std::string format;  // "megatron" or "llmc"
    std::vector<std::string> files;
    std::string dtype;
    uint64_t documents = 0;  // llm.c: documents are not recorded (0)
    uint64_t tokens = 0;
    LengthStats lengths;
    std::vector<DocumentPreview> previews;
};

struct VerifyReport {
    std::string format;
    std::vector<std::string> files;
    uint64_t documents = 0, tokens = 0;
    std::optional<int64_t> max_token;  // none when no token could be read
    std::optional<size_t> vocab_size;
    std::vector<std::string> problems;  // empty: sound
};

// The PREFIX `data tokenize` was given, from what a user names: an llm.c shard
// (PREFIX_000001.bin), a single .bin file (PREFIX.bin) or the prefix itself. PREFIX.meta.json
// lies beside the shards under that name, not under the shard's.
std::string dataset_prefix(const std::string& name);

// The tokenizer recorded by `data tokenize` in PREFIX.meta.json, if any; `name` as for
// dataset_prefix.
std::optional<std::string> recorded_tokenizer(const std::string& name);
std::optional<size_t> recorded_vocab_size(const std::string& name);

Result<ShardSummary> inspect_shards(const std::string& prefix, size_t show, size_t max_chars,
                                    const Tokenizer* tokenizer);
// Never fails for a bad dataset: what is wrong goes into problems. Fails only when nothing
// matching `prefix` exists.
Result<VerifyReport> verify_shards(const std::string& prefix, std::optional<size_t> vocab_size);

std::string render_summary_text(const ShardSummary& s);
nlohmann::json summary_json(const ShardSummary& s);
std::string render_verify_text(const VerifyReport& r);
nlohmann::json verify_json(const VerifyReport& r);

}  // namespace trainrig::data

// The token datasets a training run reads, memory-mapped: Megatron prefixes and llm.c shards,
// each a "part" whose tokens are read as one stream (documents already end in EOD when
// tokenized with --append-eod). Read-only; shared by all loader threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/shards/token_dtype.h"

namespace trainrig::data {

class TokenCorpus {
public:
    // Each path: a Megatron PREFIX, an llm.c .bin shard, or an llm.c prefix (PREFIX_000000.bin,
    // ...). Structural problems are errors (the checks of `data verify`).
    static Result<std::shared_ptr<const TokenCorpus>> open(const std::vector<std::string>& paths);

    size_t parts() const { return parts_.size(); }
    uint64_t part_tokens(size_t p) const { return parts_[p].tokens; }
    uint64_t tokens() const;
    // Copies tokens [first, first + n) of part p, widened to uint32.
    void copy(size_t p, uint64_t first, size_t n, uint32_t* out) const;

    struct Part {
        std::shared_ptr<const void> owner;  // keeps the mapping alive
        const unsigned char* base = nullptr;
        TokenDtype dtype = TokenDtype::kU16;
        uint64_t tokens = 0;
    };

private:
    std::vector<Part> parts_;
};

}  // namespace trainrig::data

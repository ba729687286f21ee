// Writing token shards: one interface over Megatron's indexed dataset and llm.c's shards, so
// `data tokenize` streams documents without knowing the format. Nothing is visible at the
// output paths until commit() succeeds; a writer destroyed uncommitted leaves no trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/shards/token_dtype.h"

namespace trainrig::data {

class ShardWriter {
public:
    virtual ~ShardWriter() = default;
    // One document. Ids must be below the vocabulary size given at creation.
    virtual Status add_document(std::span<const uint32_t> ids) = 0;
    // Makes every output file durable (fsync), then, unless `cancel` is set by then, renames
    // them all into place; returns their paths. Until the renames nothing at the output paths
    // has changed.
    virtual Result<std::vector<std::string>> commit(const std::atomic<bool>* cancel = nullptr) = 0;
    virtual TokenDtype dtype() const = 0;
    uint64_t documents() const { return documents_; }
    uint64_t tokens() const { return tokens_; }

protected:
    uint64_t documents_ = 0;
    uint64_t tokens_ = 0;
};

// Megatron-LM: PREFIX.bin + PREFIX.idx, one sequence per document.
Result<std::unique_ptr<ShardWriter>> make_megatron_writer(const std::string& prefix,
                                                          size_t vocab_size);

// llm.c: PREFIX_000000.bin, ... each with a 256 x int32 header and at most shard_tokens tokens.
// Shards left by an earlier run beyond the last one written are removed at commit.
Result<std::unique_ptr<ShardWriter>> make_llmc_writer(const std::string& prefix, size_t vocab_size,
                                                      uint64_t shard_tokens);

// Packs ids as dtype (uint16, int32 or uint32), little-endian.
void pack_tokens(std::span<const uint32_t> ids, TokenDtype dtype, std::string& out);

}  // namespace trainrig::data

namespace trainrig::data {
inline Status interrupted_status() {
    return {Errc::kIo, "interrupted; the previous output, if any, is unchanged"};
}
}  // namespace trainrig::data

// `data tokenize` as a library: inputs -> documents -> token ids -> a ShardWriter, on N worker
// threads. A reader thread cuts the (decompressed) input into batches of whole lines; workers
// parse and encode batches; the calling thread writes results in input order, so the output is
// the same whatever the number of workers. At most 2 x workers + 2 batches are in flight, which
// bounds memory by workers x batch size, not by the input size.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/shards/shard_writer.h"
#include "data/tokenize/document_extractor.h"
#include "data/tokenizer/tokenizer.h"

namespace trainrig::data {

enum class OnError { kFail, kSkip };

struct TokenizeOptions {
    std::vector<std::string> inputs;
    InputFormat format = InputFormat::kJsonl;
    TextTemplate text = TextTemplate::single_key("text");
    bool append_eod = false;
    bool allow_special = false;
    unsigned workers = 1;
    size_t batch_bytes = 1 << 20;
    OnError on_error = OnError::kFail;
    const std::atomic<bool>* cancel = nullptr;  // set from a signal handler to stop early
};

struct SkippedRecord {
    std::string where;  // "file line N"
    std::string why;
};

struct TokenizeStats {
    uint64_t records = 0;  // lines (or files) read
    uint64_t documents = 0;
    uint64_t tokens = 0;
    uint64_t skipped = 0;
    uint64_t text_bytes = 0;       // bytes of document text encoded
    uint64_t input_bytes = 0;      // decompressed bytes read
    uint64_t file_bytes_done = 0;  // compressed bytes consumed (for ETA)
    uint64_t file_bytes_total = 0;
    double seconds = 0;
    std::vector<SkippedRecord> first_skipped;  // up to 10
};

using ProgressFn = std::function<void(const TokenizeStats&)>;

// Runs the whole pipeline into `writer` (not committed: the caller commits on success).
// Errors name the file and line.
Result<TokenizeStats> run_tokenize(const Tokenizer& tokenizer, const TokenizeOptions& options,
                                   ShardWriter& writer, const ProgressFn& progress = {});

}  // namespace trainrig::data

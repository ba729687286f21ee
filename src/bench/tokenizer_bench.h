// `trainrig bench run tokenizer`: encode throughput of a tokenizer on a text corpus, single-thread
// and with N threads (each encoding the whole corpus). Every timed run uses fresh encoders (empty
// piece caches), as a real `data tokenize` run starts; one untimed warm-up run loads the corpus
// into memory and caches.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "data/tokenizer/tokenizer.h"
#include "measure/bench_record.h"

namespace trainrig::bench {

struct TokenizerBenchOptions {
    std::vector<std::string> inputs;  // text files, concatenated
    std::vector<unsigned> threads = {1};
    unsigned repeats = 5;
};

Result<std::vector<BenchRecord>> run_tokenizer_bench(const data::Tokenizer& tokenizer,
                                                     const TokenizerBenchOptions& options);

}  // namespace trainrig::bench

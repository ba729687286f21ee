// A CI-sized randomized fuzz run of the JSONL extractor and the tokenizer: mutations of JSONL,
// text and UTF-8 samples plus random bytes, with a fixed seed so a failure reproduces. The
// libFuzzer harness (tests/fuzz/data_fuzzer.cpp) runs the same target.
#include <gtest/gtest.h>

#include <random>

#include "../fuzz/data_fuzz_targets.h"

namespace trainrig {
namespace {

const char* kSeeds[] = {
    "{\"text\": \"Hello, world! The 123 things\\n\\n  in \xe4\xbd\xa0\xe5\xa5\xbd ok\"}",
    "{\"a\": {\"b\": \"x\"}, \"c\": [\"y\", 2]}",
    "He's   the <|endoftext|> 12345 \xe4\xbd\xa0\xe5\xa5\xbd \r\n\n\t x",
    "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb   \xc2\x85 caf\xc3\xa9 \xed\xa0\x80",
    "    def f(x):\n        return x  # comment\n\n\n",
};

TEST(DataFuzz, RandomAndMutatedInputsRoundTripAndNeverCrash) {
    std::mt19937_64 rng(20261130);
    for (int iter = 0; iter < 3000; ++iter) {
        std::string in = kSeeds[iter % std::size(kSeeds)];
        const int edits = 1 + static_cast<int>(rng() % 6);
        for (int e = 0; e < edits && !in.empty(); ++e) {
            const size_t pos = rng() % in.size();
            switch (rng() % 4) {
                case 0:
                    in[pos] = static_cast<char>(rng() & 0xFF);
                    break;
                case 1:
                    in.erase(pos, 1 + rng() % 4);
                    break;
                case 2:
                    in.insert(pos, 1, "\"{}[],: \n\\\x80\xe4"[rng() % 13]);
                    break;
                case 3:
                    in += in.substr(pos, 32);
                    break;
            }
        }
        if (iter % 10 == 0) {
            in.resize(rng() % 300);
            for (auto& c : in) c = static_cast<char>(rng() & 0xFF);
        }
        ASSERT_NO_THROW(
            fuzz::data_one_input(reinterpret_cast<const uint8_t*>(in.data()), in.size()))
            << "iteration " << iter;
    }
}

// Long runs exercise the heap merge path and the regex's backtracking over whitespace.
TEST(DataFuzz, LongRunsOfOneClassRoundTrip) {
    for (const std::string unit : {"a", " ", "\n", "1", "\xe4\xbd\xa0", "!", " \t"}) {
        std::string in;
        for (int i = 0; i < 5000; ++i) in += unit;
        ASSERT_NO_THROW(
            fuzz::data_one_input(reinterpret_cast<const uint8_t*>(in.data()), in.size()))
            << "run of " << unit.size() << "-byte unit";
    }
}

}  // namespace
}  // namespace trainrig

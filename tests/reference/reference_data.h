// Access to the reference data tests/data/fetch-tokenizer-data.sh puts in $TRAINRIG_TEST_CACHE:
// real vocabularies, a real corpus and the token ids the reference implementations give.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trainrig::testing {

inline std::string cache_dir() {
    const char* env = std::getenv("TRAINRIG_TEST_CACHE");
    return env != nullptr ? env : "";
}

inline std::string read_binary(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::vector<uint32_t> read_ids(const std::string& path) {
    const std::string bytes = read_binary(path);
    std::vector<uint32_t> ids(bytes.size() / 4);
    std::memcpy(ids.data(), bytes.data(), ids.size() * 4);
    return ids;
}

inline const std::vector<std::string>& corpus_names() {
    static const std::vector<std::string> names = {"english", "code",    "chinese",   "japanese",
                                                   "emoji",   "numbers", "whitespace"};
    return names;
}

}  // namespace trainrig::testing

// The fixture of the `trainrig data` CLI tests: each test writes its own small byte-level BPE
// tokenizer (a Hugging Face tokenizer.json) into a temporary folder, so nothing needs the
// network or the downloaded tokenizer cache; helpers to run the binary and read its output.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "run_binary.h"

namespace trainrig::test {

using json = nlohmann::json;
namespace fs = std::filesystem;

inline const std::string kEod = "<|endoftext|>";

inline std::string utf8_of(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else {  // below 0x800: all this table needs
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: the 188 printable bytes stand for themselves, the other 68 map to
// U+0100, U+0101, ... in byte order.
inline const std::array<std::string, 256>& byte_alphabet() {
    static const std::array<std::string, 256> table = [] {
        std::array<std::string, 256> t;
        uint32_t extra = 0;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable =
                (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            t[b] = utf8_of(printable ? b : 0x100 + extra++);
        }
        return t;
    }();
    return table;
}

inline std::string byte_level(const std::string& bytes) {
    std::string out;
    for (const char c : bytes) out += byte_alphabet()[static_cast<unsigned char>(c)];
    return out;
}

// The tokenizer under test: id b is the byte b, then one token per merge, then <|endoftext|>.
struct TinyTokenizer {
    std::vector<std::string> tokens;  // id -> bytes
    std::vector<std::pair<std::string, std::string>> merges;
    uint32_t eod = 0;

    TinyTokenizer() {
        for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
        merges = {{" ", "t"},       {"h", "e"},          {" t", "he"},     {"i", "n"},
                  {"e", "r"},       {" ", "a"},          {"\xe4", "\xbd"}, {"\xe4\xbd", "\xa0"},
                  {"\xf0", "\x9f"}, {"\xf0\x9f", "\x98"}};
        for (const auto& [a, b] : merges) tokens.push_back(a + b);
        eod = static_cast<uint32_t>(tokens.size());
    }

    size_t vocab_size() const { return tokens.size() + 1; }

    // Decoding written here, from the tokenizer's definition, shares no code with trainrig.
    std::string decode(const std::vector<uint32_t>& ids) const {
        std::string out;
        for (const uint32_t id : ids) out += id == eod ? kEod : tokens.at(id);
        return out;
    }

    json vocab_json() const {
        json vocab = json::object();
        for (size_t id = 0; id < tokens.size(); ++id) vocab[byte_level(tokens[id])] = id;
        return vocab;
    }

    std::vector<std::string> merge_lines() const {
        std::vector<std::string> out;
        for (const auto& [a, b] : merges) out.push_back(byte_level(a) + " " + byte_level(b));
        return out;
    }

    json tokenizer_json() const {
        return {{"version", "1.0"},
                {"truncation", nullptr},
                {"padding", nullptr},
                {"added_tokens",
                 {{{"id", eod}, {"content", kEod}, {"special", true}, {"normalized", false}}}},
                {"normalizer", nullptr},
                {"pre_tokenizer",
                 {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
                {"post_processor", nullptr},
                {"decoder", {{"type", "ByteLevel"}}},
                {"model", {{"type", "BPE"}, {"vocab", vocab_json()}, {"merges", merge_lines()}}}};
    }
};

inline void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
}

inline std::string jsonl(const std::vector<std::string>& texts) {
    std::string out;
    for (const auto& t : texts) out += json{{"text", t}}.dump() + "\n";
    return out;
}

// Varied, deterministic text: ASCII words, Chinese, emoji, whitespace runs.
inline std::string sample_text(uint64_t n) {
    static const std::vector<std::string> words = {
        "the",   "other", "thing",    "in", "here", "water", "river", "alpha", "你好",
        "世界",  "😀",     "👍🏽", "  ", "\t",   "\n",    "x9",    "'s",    "ünïcödé",
        "12345", "...",   "the",      "a",  "an",   "ther",  "inner", "—",     "数据"};
    std::string s;
    uint64_t x = n * 2654435761u + 12345;
    const size_t count = 3 + n % 40;
    for (size_t i = 0; i < count; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (i > 0) s += ' ';
        s += words[(x >> 33) % words.size()];
    }
    return s;
}

inline bool one_line(const std::string& err) {
    return !err.empty() && err.back() == '\n' && std::count(err.begin(), err.end(), '\n') == 1;
}

inline std::vector<uint32_t> ids_of(const json& list) {
    std::vector<uint32_t> out;
    for (const auto& v : list) out.push_back(v.get<uint32_t>());
    return out;
}

class DataCli : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("trainrig-data-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        tokenizer_ = path("tokenizer.json");
        write_file(tokenizer_, tiny_.tokenizer_json().dump());
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    RunResult tokenize(const std::string& args, const std::string& env = "") {
        return run_trainrig("data tokenize --no-progress --tokenizer " + tokenizer_ + " " + args,
                            env);
    }

    // Tokenizes texts (one JSON line each) into PREFIX, expecting success.
    void tokenize_texts(const std::vector<std::string>& texts, const std::string& prefix,
                        const std::string& extra = "--append-eod") {
        const std::string input = path(fs::path(prefix).filename().string() + ".input.jsonl");
        write_file(input, jsonl(texts));
        auto r = tokenize("--input " + input + " --output-prefix " + prefix + " " + extra);
        ASSERT_EQ(r.rc, 0) << r.err;
    }

    json inspect_json(const std::string& prefix, size_t show) {
        auto r = run_trainrig("data inspect " + prefix + " --json --show " + std::to_string(show) +
                              " --max-chars 1000000000");
        EXPECT_EQ(r.rc, 0) << r.err;
        auto doc = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 300);
        return doc;
    }

    std::vector<std::string> decoded(const std::string& prefix, size_t show) {
        std::vector<std::string> out;
        const json doc = inspect_json(prefix, show);
        for (const auto& p : doc["previews"])
            out.push_back(p.value("text", std::string("(no text)")));
        return out;
    }

    json read_megatron(const std::string& prefix) {
        auto r = run_sh("python3 " + std::string(TRAINRIG_SOURCE_DIR) +
                        "/tests/data/read_megatron.py " + prefix);
        EXPECT_EQ(r.rc, 0) << r.err;
        auto doc = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 300);
        return doc;
    }

    std::map<std::string, std::string> snapshot(const std::string& prefix) {
        std::map<std::string, std::string> files;
        for (const char* ext : {".bin", ".idx", ".meta.json"}) {
            EXPECT_TRUE(fs::exists(prefix + ext)) << prefix + ext;
            files[ext] = slurp(prefix + ext);
        }
        return files;
    }

    std::vector<std::string> temp_files() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_)) {
            const std::string name = e.path().filename().string();
            if (name.find(".tmp-") != std::string::npos) out.push_back(name);
        }
        return out;
    }

    // Nothing published at PREFIX and no staging file left anywhere in the folder.
    void expect_no_output(const std::string& prefix) {
        for (const char* ext : {".bin", ".idx", ".meta.json", "_000000.bin"})
            EXPECT_FALSE(fs::exists(prefix + ext)) << prefix + ext;
        EXPECT_EQ(temp_files(), std::vector<std::string>{});
    }

    TinyTokenizer tiny_;
    fs::path dir_;
    std::string tokenizer_;
};

}  // namespace trainrig::test

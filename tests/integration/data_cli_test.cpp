// `trainrig data tokenize|inspect|verify` as a user runs them. Every test writes its own small
// byte-level BPE tokenizer (a Hugging Face tokenizer.json) into a temporary folder, so nothing
// needs the network or the downloaded tokenizer cache. Covered: round trips, an independent
// reader, determinism across workers, compressed inputs, field selection, llm.c shards, bad
// records, runs that fail (bad line, full disk, Ctrl-C) leaving the previous output as it was,
// and verify finding corruption.
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
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kEod = "<|endoftext|>";

std::string utf8_of(uint32_t cp) {
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
const std::array<std::string, 256>& byte_alphabet() {
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

std::string byte_level(const std::string& bytes) {
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

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
}

std::string jsonl(const std::vector<std::string>& texts) {
    std::string out;
    for (const auto& t : texts) out += json{{"text", t}}.dump() + "\n";
    return out;
}

// Varied, deterministic text: ASCII words, Chinese, emoji, whitespace runs.
std::string sample_text(uint64_t n) {
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

bool one_line(const std::string& err) {
    return !err.empty() && err.back() == '\n' && std::count(err.begin(), err.end(), '\n') == 1;
}

// Runs a shell command line, capturing stdout and stderr like run_trainrig.
RunResult run_sh(const std::string& command) {
    static int counter = 0;
    auto base = fs::temp_directory_path() / ("trainrig-data-sh-" + std::to_string(::getpid()) +
                                             "-" + std::to_string(counter++));
    const std::string cmd =
        command + " >" + base.string() + ".out 2>" + base.string() + ".err </dev/null";
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(base.string() + ".out");
    r.err = slurp(base.string() + ".err");
    fs::remove(base.string() + ".out");
    fs::remove(base.string() + ".err");
    return r;
}

std::vector<uint32_t> ids_of(const json& list) {
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
        auto r = tokenize("--input " + input + " --output " + prefix + " " + extra);
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

// ---- 1. Megatron output, verify, inspect, round trip ------------------------------------------

TEST_F(DataCli, TokenizeWritesBinIdxAndMetaThatVerifyAccepts) {
    write_file(path("in.jsonl"), jsonl({"the other thing in the", "hello", "water"}));
    const std::string out = path("out");
    auto r = tokenize("--input " + path("in.jsonl") + " --append-eod --output " + out + " --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    for (const char* ext : {".bin", ".idx", ".meta.json"})
        EXPECT_TRUE(fs::is_regular_file(out + ext)) << ext;
    const auto summary = json::parse(r.out);
    EXPECT_EQ(summary["schema"], "trainrig.data.tokenize");
    EXPECT_EQ(summary["documents"], 3);
    EXPECT_EQ(summary["skipped"], 0);
    EXPECT_EQ(summary["dtype"], "uint16");
    // "the" -> t he; " other" -> ' ' o t he r; " thing" -> ' t' h in g; " in" -> ' ' in;
    // " the" -> ' the'; then the end-of-document token.
    std::vector<uint32_t> first = {116, 257, 32, 111, 116, 257, 114, 256, 104, 259, 103, 32, 259};
    first.insert(first.end(), {258, tiny_.eod});
    const auto meta = json::parse(slurp(out + ".meta.json"));
    EXPECT_EQ(meta["schema"], "trainrig.data.shards");
    EXPECT_EQ(meta["format"], "megatron");
    EXPECT_EQ(meta["documents"], 3);
    EXPECT_EQ(meta["tokens"], summary["tokens"]);
    EXPECT_EQ(meta["append_eod"], true);
    EXPECT_EQ(meta["tokenizer"]["eod"], tiny_.eod);
    EXPECT_EQ(meta["tokenizer"]["vocab_size"], tiny_.vocab_size());
    // .bin is the documents' uint16 tokens back to back; the first document starts it.
    const std::string bin = slurp(out + ".bin");
    EXPECT_EQ(bin.size(), 2 * summary["tokens"].get<size_t>());
    std::vector<uint32_t> head;
    for (size_t i = 0; i < first.size() && 2 * i + 1 < bin.size(); ++i)
        head.push_back(static_cast<uint32_t>(static_cast<unsigned char>(bin[2 * i]) |
                                             static_cast<unsigned char>(bin[2 * i + 1]) << 8));
    EXPECT_EQ(head, first);

    auto v = run_trainrig("data verify " + out);
    EXPECT_EQ(v.rc, 0) << v.out << v.err;
    EXPECT_NE(v.out.find("sound"), std::string::npos) << v.out;
    auto vj = run_trainrig("data verify " + out + " --json");
    EXPECT_EQ(vj.rc, 0);
    const auto report = json::parse(vj.out);
    EXPECT_EQ(report["ok"], true);
    EXPECT_EQ(report["documents"], 3);
    EXPECT_EQ(report["vocab_size"], tiny_.vocab_size());
    EXPECT_EQ(report["max_token"], tiny_.eod);
}

TEST_F(DataCli, InspectCountsDocumentsAndTokensAndDecodesTextPlusEod) {
    const std::vector<std::string> texts = {"the other thing", "in here", "alpha river water"};
    const std::string out = path("out");
    tokenize_texts(texts, out);
    const auto doc = inspect_json(out, texts.size());
    EXPECT_EQ(doc["schema"], "trainrig.data.inspect");
    EXPECT_EQ(doc["format"], "megatron");
    EXPECT_EQ(doc["documents"], texts.size());
    const auto meta = json::parse(slurp(out + ".meta.json"));
    EXPECT_EQ(doc["tokens"], meta["tokens"]);
    uint64_t sum = 0;
    ASSERT_EQ(doc["previews"].size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
        const auto& p = doc["previews"][i];
        EXPECT_EQ(p["index"], i);
        EXPECT_EQ(p["text"], texts[i] + kEod);
        sum += p["tokens"].get<uint64_t>();
    }
    EXPECT_EQ(doc["tokens"], sum);
    uint64_t longest = 0;
    for (const auto& p : doc["previews"]) longest = std::max(longest, p["tokens"].get<uint64_t>());
    EXPECT_EQ(doc["lengths"]["max"], longest);
}

TEST_F(DataCli, RoundTripIsExactForChineseEmojiAndWhitespaceRuns) {
    const std::vector<std::string> texts = {
        "Plain ASCII, with punctuation: it's 42!",
        "你好，世界。数据处理",
        "emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇩🇪",
        "  leading,   inner runs\t\ttabs\n\n\nnewlines and trailing   ",
        " ",
        "\r\n mixed \u00a0nbsp \u2028 line sep",
        "special-looking text <|endoftext|> stays text",
        "ünïcödé ÀÉÎÕÜ ßẞ",
    };
    const std::string out = path("out");
    tokenize_texts(texts, out);
    const auto got = decoded(out, texts.size());
    ASSERT_EQ(got.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(got[i], texts[i] + kEod) << i;
    // Without --allow-special the eod string in the text is not the eod token.
    const auto doc = read_megatron(out);
    const auto ids = ids_of(doc["documents"][6]);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), tiny_.eod), 1);
    EXPECT_EQ(ids.back(), tiny_.eod);
}

// ---- 2. An independent reader ------------------------------------------------------------------

TEST_F(DataCli, IndependentReaderFindsTheSameDocumentsAndIds) {
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 50; ++i) texts.push_back(sample_text(i));
    const std::string out = path("out");
    tokenize_texts(texts, out);
    const auto doc = read_megatron(out);
    EXPECT_EQ(doc["dtype"], "u16");
    EXPECT_EQ(doc["sequences"], texts.size());
    ASSERT_EQ(doc["documents"].size(), texts.size());
    const auto shown = inspect_json(out, texts.size());
    ASSERT_EQ(shown["previews"].size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
        const auto ids = ids_of(doc["documents"][i]);
        EXPECT_EQ(tiny_.decode(ids), texts[i] + kEod) << i;
        const auto first = ids_of(shown["previews"][i]["first_ids"]);
        ASSERT_LE(first.size(), ids.size());
        EXPECT_EQ(first, std::vector<uint32_t>(ids.begin(), ids.begin() + first.size())) << i;
        EXPECT_EQ(shown["previews"][i]["tokens"], ids.size()) << i;
    }
}

// ---- 3. Determinism ----------------------------------------------------------------------------

TEST_F(DataCli, OutputIsTheSameWhateverTheNumberOfWorkers) {
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 4000; ++i) texts.push_back(sample_text(i));
    write_file(path("in.jsonl"), jsonl(texts));
    ASSERT_GT(fs::file_size(path("in.jsonl")), 20 * 4096u);  // many batches
    std::map<std::string, std::string> first;
    for (const char* workers : {"1", "2", "4"}) {
        const std::string out = path(std::string("w") + workers);
        auto r = tokenize("--input " + path("in.jsonl") + " --append-eod --batch-bytes 4096 " +
                          "--workers " + workers + " --output " + out);
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::string bin = slurp(out + ".bin"), idx = slurp(out + ".idx");
        if (first.empty()) {
            first = {{".bin", bin}, {".idx", idx}};
            continue;
        }
        EXPECT_TRUE(bin == first[".bin"]) << workers << " workers: .bin differs";
        EXPECT_TRUE(idx == first[".idx"]) << workers << " workers: .idx differs";
    }
    EXPECT_EQ(read_megatron(path("w1"))["sequences"], texts.size());
}

// ---- 4. Compressed inputs ----------------------------------------------------------------------

class DataCliCompressed : public DataCli {
protected:
    void SetUp() override {
        DataCli::SetUp();
        std::vector<std::string> texts;
        for (uint64_t i = 0; i < 3000; ++i) texts.push_back(sample_text(i));
        write_file(path("in.jsonl"), jsonl(texts));
        auto r =
            tokenize("--input " + path("in.jsonl") + " --append-eod --output " + path("plain"));
        ASSERT_EQ(r.rc, 0) << r.err;
    }
    void expect_same_as_plain(const std::string& input) {
        auto r = tokenize("--input " + input + " --append-eod --output " + path("packed"));
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_TRUE(slurp(path("packed.bin")) == slurp(path("plain.bin"))) << ".bin differs";
        EXPECT_TRUE(slurp(path("packed.idx")) == slurp(path("plain.idx"))) << ".idx differs";
    }
};

TEST_F(DataCliCompressed, GzipInputGivesTheSameOutputAsThePlainFile) {
    ASSERT_EQ(std::system(("gzip -k " + path("in.jsonl")).c_str()), 0);
    expect_same_as_plain(path("in.jsonl.gz"));
    // Concatenated gzip members are one stream (cat a.gz b.gz).
    const std::string gz = slurp(path("in.jsonl.gz"));
    write_file(path("twice.jsonl.gz"), gz + gz);
    auto r = tokenize("--input " + path("twice.jsonl.gz") + " --append-eod --output " +
                      path("twice") + " --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["documents"], 6000);
}

TEST_F(DataCliCompressed, GzipWithZeroPaddingAfterTheLastMemberIsAccepted) {
    // gzip -d and Python's gzip accept zero bytes after the last member (padded images).
    ASSERT_EQ(std::system(("gzip -k " + path("in.jsonl")).c_str()), 0);
    write_file(path("padded.jsonl.gz"), slurp(path("in.jsonl.gz")) + std::string(4096, '\0'));
    expect_same_as_plain(path("padded.jsonl.gz"));
}

TEST_F(DataCliCompressed, ZstdInputGivesTheSameOutputAsThePlainFile) {
    if (std::system("command -v zstd >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "the zstd command (Debian package zstd) is not installed";
    ASSERT_EQ(std::system(("zstd -q " + path("in.jsonl") + " -o " + path("in.jsonl.zst")).c_str()),
              0);
    expect_same_as_plain(path("in.jsonl.zst"));
    const std::string zst = slurp(path("in.jsonl.zst"));
    write_file(path("cut.jsonl.zst"), zst.substr(0, zst.size() / 2));
    auto r = tokenize("--input " + path("cut.jsonl.zst") + " --output " + path("cut"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("cut.jsonl.zst")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("zstd"), std::string::npos) << r.err;
    expect_no_output(path("cut"));
}

TEST_F(DataCliCompressed, TruncatedGzipIsAClearErrorAndWritesNothing) {
    ASSERT_EQ(std::system(("gzip -k " + path("in.jsonl")).c_str()), 0);
    const std::string gz = slurp(path("in.jsonl.gz"));
    write_file(path("cut.jsonl.gz"), gz.substr(0, gz.size() / 2));
    auto r = tokenize("--input " + path("cut.jsonl.gz") + " --output " + path("cut"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("cut.jsonl.gz")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gzip"), std::string::npos) << r.err;
    expect_no_output(path("cut"));
}

// ---- 5. Choosing the text ----------------------------------------------------------------------

TEST_F(DataCli, KeyTakesADottedPathThroughObjectsAndLists) {
    write_file(path("in.jsonl"), R"({"meta":{"text":"nested one","lang":"en"},"text":"top"})"
                                 "\n"
                                 R"({"meta":{"text":"nested two"}})"
                                 "\n");
    auto r = tokenize("--input " + path("in.jsonl") + " --key meta.text --append-eod --output " +
                      path("nested"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("nested"), 5),
              (std::vector<std::string>{"nested one" + kEod, "nested two" + kEod}));

    write_file(
        path("chat.jsonl"),
        R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]})"
        "\n");
    r = tokenize("--input " + path("chat.jsonl") + " --key messages.1.content --output " +
                 path("chat"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("chat"), 5), std::vector<std::string>{"hello there"});
}

TEST_F(DataCli, TemplateJoinsSeveralFields) {
    write_file(path("in.jsonl"),
               json{{"instruction", "Translate to French"}, {"output", "Bonjour"}}.dump() + "\n" +
                   json{{"instruction", "数一数"}, {"output", "一二三"}, {"extra", 1}}.dump() +
                   "\n");
    auto r =
        tokenize("--input " + path("in.jsonl") +
                 " --template '{instruction}\\n{output}' --append-eod --output " + path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(
        decoded(path("out"), 5),
        (std::vector<std::string>{"Translate to French\nBonjour" + kEod, "数一数\n一二三" + kEod}));
    const auto meta = json::parse(slurp(path("out.meta.json")));
    EXPECT_EQ(meta["fields"], (json{"instruction", "output"}));
}

TEST_F(DataCli, LinesFormatMakesOneDocumentPerNonBlankLine) {
    write_file(path("in.txt"), "first line\n\nsecond  line with 你好\r\n   \nthird\n");
    auto r = tokenize("--input " + path("in.txt") + " --input-format lines --append-eod --output " +
                      path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("out"), 10),
              (std::vector<std::string>{"first line" + kEod, "second  line with 你好" + kEod,
                                        "third" + kEod}));
}

TEST_F(DataCli, TextFormatMakesOneDocumentPerFile) {
    const std::string a = "A whole file.\n\nWith paragraphs,\n  and indentation.\n";
    const std::string b = "第二个文件 😀";
    write_file(path("a.txt"), a);
    write_file(path("b.txt"), b);
    auto r = tokenize("--input " + path("a.txt") + " " + path("b.txt") +
                      " --input-format text --append-eod --output " + path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("out"), 10), (std::vector<std::string>{a + kEod, b + kEod}));
}

// ---- 6. llm.c shards ---------------------------------------------------------------------------

TEST_F(DataCli, LlmcShardsSplitAtShardTokensAndVerifyAndInspectAcceptThem) {
    write_file(path("in.jsonl"), jsonl({"the other thing", "in here"}));  // 12 + 6 tokens
    const std::string prefix = path("llmc");
    auto r =
        tokenize("--input " + path("in.jsonl") +
                 " --append-eod --format llmc --shard-tokens 5 --output " + prefix + " --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto summary = json::parse(r.out);
    EXPECT_EQ(summary["tokens"], 18);
    const std::vector<int32_t> counts = {5, 5, 5, 3};
    std::vector<std::string> files;
    std::vector<uint32_t> all;
    for (size_t i = 0; i < counts.size(); ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "llmc_%06zu.bin", i);
        files.push_back(path(name));
        const std::string bytes = slurp(path(name));
        ASSERT_EQ(bytes.size(), 1024 + 2 * static_cast<size_t>(counts[i])) << name;
        int32_t header[3];
        std::memcpy(header, bytes.data(), sizeof header);
        EXPECT_EQ(header[0], 20240520) << name;  // llm.c's GPT-2 magic: uint16 tokens
        EXPECT_EQ(header[1], 1) << name;
        EXPECT_EQ(header[2], counts[i]) << name;
        for (size_t k = 1024; k + 1 < bytes.size(); k += 2)
            all.push_back(static_cast<uint32_t>(static_cast<unsigned char>(bytes[k]) |
                                                static_cast<unsigned char>(bytes[k + 1]) << 8));
    }
    EXPECT_FALSE(fs::exists(path("llmc_000004.bin")));
    EXPECT_FALSE(fs::exists(prefix + ".bin"));
    EXPECT_EQ(summary["files"], json(files));
    EXPECT_EQ(tiny_.decode(all), "the other thing" + kEod + "in here" + kEod);

    auto v = run_trainrig("data verify " + prefix + " --json");
    EXPECT_EQ(v.rc, 0) << v.out << v.err;
    const auto report = json::parse(v.out);
    EXPECT_EQ(report["format"], "llmc");
    EXPECT_EQ(report["tokens"], 18);
    EXPECT_EQ(report["files"], json(files));
    EXPECT_EQ(report["vocab_size"], tiny_.vocab_size());
    auto one = run_trainrig("data verify " + files[1]);
    EXPECT_EQ(one.rc, 0) << one.out << one.err;

    const auto doc = inspect_json(prefix, 10);
    EXPECT_EQ(doc["format"], "llmc");
    EXPECT_EQ(doc["tokens"], 18);
    ASSERT_EQ(doc["previews"].size(), 4u);
    EXPECT_EQ(doc["previews"][3]["text"], "re" + kEod);  // "in here<eod>": in, ' ', he, r, e, eod
}

// ---- 7. Bad records ----------------------------------------------------------------------------

TEST_F(DataCli, MalformedJsonNamesFileAndLineAndWritesNothing) {
    // The bad line is deep in a file read in many small batches, so its number is counted
    // across batches.
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 3000; ++i) texts.push_back(sample_text(i));
    std::string input = jsonl(texts);
    input += "{\"text\": \"unterminated}\n";
    input += jsonl({"after the bad line"});
    write_file(path("bad.jsonl"), input);
    auto r = tokenize("--input " + path("bad.jsonl") + " --workers 2 --batch-bytes 4096 --output " +
                      path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 3001 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("JSON"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, MissingKeyNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine"}) + R"({"content":"no text key"})"
                                                    "\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 2 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"text\""), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, NonStringValueNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine", "also fine"}) + R"({"text":["a","list"]})"
                                                                 "\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 3 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not a string"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, InvalidUtf8InsideJsonNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine"}) + "{\"text\":\"caf\xe9 latin-1\"}\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 2 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, InvalidUtf8InALinesFileNamesLineAndByteAndWritesNothing) {
    write_file(path("bad.txt"), "fine\nab\xc3(cd\n");
    auto r =
        tokenize("--input " + path("bad.txt") + " --input-format lines --output " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.txt") + " line 2 is not valid UTF-8 (byte 3)"),
              std::string::npos)
        << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, EmptyInputIsNoDocumentsAndWritesNothing) {
    write_file(path("empty.jsonl"), "");
    write_file(path("blank.jsonl"), "\n  \n\n");
    for (const char* name : {"empty.jsonl", "blank.jsonl"}) {
        auto r = tokenize("--input " + path(name) + " --output " + path("out"));
        EXPECT_EQ(r.rc, 2) << name << r.out;
        EXPECT_TRUE(one_line(r.err)) << r.err;
        EXPECT_NE(r.err.find("no documents"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(path(name)), std::string::npos) << r.err;
        expect_no_output(path("out"));
    }
}

TEST_F(DataCli, OnErrorSkipCountsAndReportsTheBadLines) {
    write_file(path("mixed.jsonl"), jsonl({"good one"}) + "{broken\n" +
                                        R"({"txt":"wrong key"})"
                                        "\n" +
                                        R"({"text":5})"
                                        "\n" +
                                        jsonl({"good two"}) + "{\"text\":\"\xff\"}\n");
    const std::string in = path("mixed.jsonl");
    auto r = tokenize("--input " + in + " --on-error skip --append-eod --output " + path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("skipped 4 records"), std::string::npos) << r.out;
    for (const char* line : {" line 2: ", " line 3: ", " line 4: ", " line 6: "})
        EXPECT_NE(r.out.find(in + line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(decoded(path("out"), 10),
              (std::vector<std::string>{"good one" + kEod, "good two" + kEod}));
    EXPECT_EQ(json::parse(slurp(path("out.meta.json")))["skipped"], 4);

    auto j = tokenize("--input " + in + " --on-error skip --output " + path("out2") + " --json");
    ASSERT_EQ(j.rc, 0) << j.err;
    const auto doc = json::parse(j.out);
    EXPECT_EQ(doc["skipped"], 4);
    EXPECT_EQ(doc["documents"], 2);
    EXPECT_EQ(doc["records"], 6);
    ASSERT_EQ(doc["first_skipped"].size(), 4u);
    EXPECT_EQ(doc["first_skipped"][0]["where"], in + " line 2");
    EXPECT_EQ(doc["first_skipped"][3]["where"], in + " line 6");
    for (const auto& s : doc["first_skipped"]) EXPECT_FALSE(s["why"].get<std::string>().empty());
}

// ---- 8.-11. Failed runs keep the previous output ------------------------------------------------

TEST_F(DataCli, FailedRunLeavesThePreviousOutputByteForByte) {
    const std::string out = path("out");
    tokenize_texts({"the previous output", "stays"}, out);
    const auto before = snapshot(out);
    write_file(path("bad.jsonl"), jsonl({"new", "documents"}) + "not json\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --append-eod --output " + out);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.err.find(" line 3 "), std::string::npos) << r.err;
    EXPECT_TRUE(snapshot(out) == before) << "the previous output changed";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    EXPECT_EQ(run_trainrig("data verify " + out).rc, 0);
}

TEST_F(DataCli, HundredMegabyteSingleLineTokenizes) {
    // One document of 100 MB: words separated by single spaces (about 8 s on 2 cores).
    static const std::vector<std::string> words = {"the",  "other", "thing", "in",
                                                   "here", "water", "river", "alpha"};
    constexpr size_t kBytes = 100'000'000;
    std::string line;
    line.reserve(kBytes + 64);
    line += R"({"text":")";
    for (size_t i = 0; line.size() < kBytes; ++i) {
        if (i > 0) line += ' ';
        line += words[i % words.size()];
    }
    line += "\"}\n";
    write_file(path("big.jsonl"), line);
    line.clear();
    line.shrink_to_fit();
    const std::string out = path("big");
    const auto start = std::chrono::steady_clock::now();
    auto r = tokenize("--input " + path("big.jsonl") + " --append-eod --output " + out + " --json");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fs::remove(path("big.jsonl"));
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto summary = json::parse(r.out);
    EXPECT_EQ(summary["documents"], 1);
    EXPECT_GT(summary["tokens"].get<uint64_t>(), 10'000'000u);
    EXPECT_LT(seconds, 60.0);
    auto v = run_trainrig("data verify " + out + " --json");
    EXPECT_EQ(v.rc, 0) << v.out << v.err;
    EXPECT_EQ(json::parse(v.out)["tokens"], summary["tokens"]);
    auto doc = run_trainrig("data inspect " + out + " --json --show 1 --max-chars 30");
    ASSERT_EQ(doc.rc, 0) << doc.err;
    EXPECT_EQ(json::parse(doc.out)["previews"][0]["text"], "the other thing in here water …");
    for (const char* ext : {".bin", ".idx", ".meta.json"}) fs::remove(out + ext);
}

TEST_F(DataCli, FullDiskFailsCleanlyAndKeepsThePreviousOutput) {
    const std::string out = path("out");
    tokenize_texts({"the previous output", "stays"}, out);
    const auto before = snapshot(out);
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 20000; ++i) texts.push_back(sample_text(i));
    write_file(path("in.jsonl"), jsonl(texts));
    // A file-size limit of 200 blocks (100 KiB): writing past it fails with EFBIG, as a full disk
    // fails with ENOSPC. SIGXFSZ is ignored, so write() returns the error.
    auto r = run_sh("sh -c \"trap '' XFSZ; ulimit -f 200; exec " + std::string(TRAINRIG_BINARY) +
                    " data tokenize --no-progress --tokenizer " + tokenizer_ + " --input " +
                    path("in.jsonl") + " --append-eod --output " + out + "\"");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(out), std::string::npos) << r.err;
    EXPECT_TRUE(snapshot(out) == before) << "the previous output changed";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    // The same input fits without the limit.
    auto ok = tokenize("--input " + path("in.jsonl") + " --output " + path("fits"));
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_GT(fs::file_size(path("fits.bin")), 200u * 512);
}

TEST_F(DataCli, InterruptStopsPromptlyAndKeepsThePreviousOutput) {
    const std::string out = path("out");
    tokenize_texts({"the previous output", "stays"}, out);
    const auto before = snapshot(out);
    // About 64 MB of lines: several seconds of work, interrupted after 0.3 s.
    {
        std::string input;
        input.reserve(65 << 20);
        for (uint64_t i = 0; input.size() < (64u << 20); ++i) {
            std::string text;
            for (int k = 0; k < 8; ++k) text += sample_text(i * 8 + k) + " ";
            input += json{{"text", text}}.dump() + "\n";
        }
        write_file(path("in.jsonl"), input);
    }
    const std::string err_path = path("run.err");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(err, 2);
        const std::string input = path("in.jsonl");
        ::execl(TRAINRIG_BINARY, TRAINRIG_BINARY, "data", "tokenize", "--no-progress",
                "--tokenizer", tokenizer_.c_str(), "--input", input.c_str(), "--append-eod",
                "--workers", "2", "--output", out.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Wait until the run has started writing (its staging file exists), then let it work.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (temp_files().empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(temp_files().empty()) << "the run never started writing";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0)
        << "the run finished before the signal; make the input larger";
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    const auto signalled = std::chrono::steady_clock::now();
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() - signalled < std::chrono::seconds(30))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        FAIL() << "still running 30 s after SIGINT";
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
    EXPECT_LT(seconds, 3.0) << "took " << seconds << " s to stop";
    ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal instead of handling it";
    EXPECT_NE(WEXITSTATUS(status), 0);
    const std::string err = slurp(err_path);
    EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
    EXPECT_TRUE(one_line(err)) << err;
    EXPECT_TRUE(snapshot(out) == before) << "the previous output changed";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
}

// ---- 12. verify finds corruption ---------------------------------------------------------------

TEST_F(DataCli, VerifyReportsABinShorterThanItsIndex) {
    const std::string out = path("out");
    tokenize_texts({"the other thing", "in here", "water"}, out);
    fs::resize_file(out + ".bin", fs::file_size(out + ".bin") - 2);
    auto r = run_trainrig("data verify " + out);
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("problem: " + out + ".bin"), std::string::npos) << r.out;
    auto j = run_trainrig("data verify " + out + " --json");
    EXPECT_EQ(j.rc, 1);
    const auto doc = json::parse(j.out);
    EXPECT_EQ(doc["ok"], false);
    ASSERT_FALSE(doc["problems"].empty());
    EXPECT_NE(doc["problems"][0].get<std::string>().find(out + ".bin"), std::string::npos)
        << doc.dump();
}

TEST_F(DataCli, VerifyReportsATokenOutsideTheVocabulary) {
    const std::string out = path("out");
    tokenize_texts({"the other thing", "in here", "water"}, out);  // 12, 6, 6 tokens
    // Token 2 of document 1 (uint16 at token offset 12 + 2) becomes 9999.
    {
        std::fstream f(out + ".bin", std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(2 * (12 + 2));
        const char id[2] = {static_cast<char>(9999 & 0xFF), static_cast<char>(9999 >> 8)};
        f.write(id, 2);
        ASSERT_TRUE(f.good());
    }
    auto r =
        run_trainrig("data verify " + out + " --vocab-size " + std::to_string(tiny_.vocab_size()));
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("token 2 of document 1 is 9999"), std::string::npos) << r.out;
    auto j = run_trainrig("data verify " + out + " --json --vocab-size 10000");
    EXPECT_EQ(j.rc, 0) << j.out;  // within a larger vocabulary it is fine
    EXPECT_EQ(json::parse(j.out)["max_token"], 9999);
    // Without --vocab-size the recorded tokenizer's size is used.
    EXPECT_EQ(run_trainrig("data verify " + out).rc, 1);
}

// ---- 13. Command-line errors -------------------------------------------------------------------

TEST_F(DataCli, KeyAndTemplateTogetherAreRefused) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = tokenize("--input " + path("in.jsonl") + " --key text --template '{text}' --output " +
                      path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("--key and --template"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, UnknownTokenizerNameListsThePresets) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = run_trainrig("data tokenize --tokenizer no-such-tokenizer --input " +
                          path("in.jsonl") + " --output " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("no-such-tokenizer"), std::string::npos) << r.err;
    for (const char* preset : {"gpt2", "cl100k", "o200k", "llama3"})
        EXPECT_NE(r.err.find(preset), std::string::npos) << preset << "\n" << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, PresetWithoutItsFilesNamesTheFolder) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = run_trainrig(
        "data tokenize --tokenizer gpt2 --input " + path("in.jsonl") + " --output " + path("out"),
        "TRAINRIG_TOKENIZERS=/nonexistent/tokenizers");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("/nonexistent/tokenizers"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TRAINRIG_TOKENIZERS"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

// ---- GPT-2 folder
// --------------------------------------------------------------------------------

// A GPT-2-style folder (encoder.json + vocab.bpe) whose <|endoftext|> follows its ordinary
// tokens, as in GPT-2's own files (there at 50256). Every id written must exist in the folder's
// vocabulary: documents end with the id encoder.json gives <|endoftext|> (or, failing that, the
// folder is refused with a sentence naming encoder.json).
TEST_F(DataCli, Gpt2FolderWritesOnlyIdsOfItsOwnVocabulary) {
    const std::string folder = path("gpt2-tiny");
    fs::create_directories(folder);
    json encoder = tiny_.vocab_json();
    encoder[kEod] = tiny_.eod;
    write_file(folder + "/encoder.json", encoder.dump());
    std::string merges = "#version: 0.2\n";
    for (const auto& m : tiny_.merge_lines()) merges += m + "\n";
    write_file(folder + "/vocab.bpe", merges);

    write_file(path("in.jsonl"), jsonl({"the other thing", "你好 😀"}));
    auto r = run_trainrig("data tokenize --no-progress --tokenizer " + folder + " --input " +
                          path("in.jsonl") + " --append-eod --output " + path("out"));
    if (r.rc != 0) {
        EXPECT_EQ(r.rc, 2);
        EXPECT_TRUE(one_line(r.err)) << r.err;
        EXPECT_NE(r.err.find("encoder.json"), std::string::npos) << r.err;
        expect_no_output(path("out"));
        return;
    }
    const auto doc = read_megatron(path("out"));
    ASSERT_EQ(doc["documents"].size(), 2u);
    for (const auto& d : doc["documents"]) {
        const auto ids = ids_of(d);
        ASSERT_FALSE(ids.empty());
        EXPECT_EQ(ids.back(), tiny_.eod);
        for (const uint32_t id : ids) EXPECT_LT(id, tiny_.vocab_size());
    }
    const auto meta = json::parse(slurp(path("out.meta.json")));
    EXPECT_EQ(meta["tokenizer"]["eod"], tiny_.eod);
    EXPECT_EQ(meta["tokenizer"]["vocab_size"], tiny_.vocab_size());
    EXPECT_EQ(decoded(path("out"), 5),
              (std::vector<std::string>{"the other thing" + kEod, "你好 😀" + kEod}));
}

}  // namespace
}  // namespace trainrig::test

namespace trainrig::test {
namespace {

// ---- bench tokenizer / bench loader ------------------------------------------------------------

TEST_F(DataCli, BenchTokenizerReportsEveryUnitPerThreadCount) {
    std::string text;
    for (uint64_t i = 0; i < 500; ++i) {
        std::string line = sample_text(i);
        std::replace(line.begin(), line.end(), '\n', ' ');  // documents/s counts lines
        text += line + "\n";
    }
    write_file(path("sample.txt"), text);
    auto r = run_trainrig("bench tokenizer --tokenizer " + tokenizer_ + " --input " +
                          path("sample.txt") + " --threads 1,2 --repeats 2 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.bench");
    ASSERT_EQ(doc["results"].size(), 6u);  // MB/s, tokens/s, documents/s for 1 and 2 threads
    for (const auto& rec : doc["results"]) {
        EXPECT_EQ(rec["bench"], "tokenizer");
        EXPECT_EQ(rec["samples"].size(), 2u);
        EXPECT_GT(rec["median"].get<double>(), 0.0);
        EXPECT_EQ(rec["counted"]["bytes"], text.size());
        EXPECT_EQ(rec["counted"]["documents"], 500);
    }
    // The tokens counted per run are the tokens of the text, as `data tokenize` counts them.
    tokenize_texts({text}, path("whole"), "");
    EXPECT_EQ(doc["results"][0]["counted"]["tokens"], inspect_json(path("whole"), 0)["tokens"]);
}

TEST_F(DataCli, BenchLoaderMeasuresBatchesOfWindowsPlusOne) {
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 200; ++i) texts.push_back(sample_text(i));
    tokenize_texts(texts, path("data"));
    auto r = run_trainrig("bench loader --data " + path("data") +
                          " --batch 2 --window 8 --steps 5 --repeats 3 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["results"].size(), 3u);  // tokens/s, MB/s, batches/s
    for (const auto& rec : doc["results"]) {
        EXPECT_EQ(rec["samples"].size(), 3u);
        EXPECT_EQ(rec["counted"]["tokens_per_batch"], 2 * 9);
    }
    auto small = run_trainrig("bench loader --data " + path("data") + " --batch 100000 --window 8");
    EXPECT_EQ(small.rc, 2);
    EXPECT_NE(small.err.find("fewer than one step needs"), std::string::npos) << small.err;
}

}  // namespace
}  // namespace trainrig::test

// `trainrig data tokenize|inspect|verify` and `bench run tokenizer|loader` as a user runs them:
// round trips, an independent reader, determinism across workers, compressed inputs, field
// selection, llm.c shards, GPT-2 folders, the benchmarks. Failures: data_cli_errors_test.cpp.
#include "data_cli_fixture.h"

namespace trainrig::test {
namespace {

// ---- 1. Megatron output, verify, inspect, round trip ------------------------------------------

TEST_F(DataCli, TokenizeWritesBinIdxAndMetaThatVerifyAccepts) {
    write_file(path("in.jsonl"), jsonl({"the other thing in the", "hello", "water"}));
    const std::string out = path("out");
    auto r = tokenize("--input " + path("in.jsonl") + " --append-eod --output-prefix " + out +
                      " --json");
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

TEST_F(DataCli, AnOutputPrefixInAFolderThatDoesNotExistYetIsWritten) {
    // README: `data tokenize ... --output-prefix tok/train` on a fresh checkout.
    write_file(path("in.jsonl"), jsonl({"hello", "water"}));
    const std::string out = path("tok/nested/train");
    auto r = tokenize("--input " + path("in.jsonl") + " --append-eod --output-prefix " + out);
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* ext : {".bin", ".idx", ".meta.json"})
        EXPECT_TRUE(fs::is_regular_file(out + ext)) << ext;
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
                          "--workers " + workers + " --output-prefix " + out);
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
        auto r = tokenize("--input " + path("in.jsonl") + " --append-eod --output-prefix " +
                          path("plain"));
        ASSERT_EQ(r.rc, 0) << r.err;
    }
    void expect_same_as_plain(const std::string& input) {
        auto r = tokenize("--input " + input + " --append-eod --output-prefix " + path("packed"));
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
    auto r = tokenize("--input " + path("twice.jsonl.gz") + " --append-eod --output-prefix " +
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
    auto r = tokenize("--input " + path("cut.jsonl.zst") + " --output-prefix " + path("cut"));
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
    auto r = tokenize("--input " + path("cut.jsonl.gz") + " --output-prefix " + path("cut"));
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
    auto r = tokenize("--input " + path("in.jsonl") +
                      " --key meta.text --append-eod --output-prefix " + path("nested"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("nested"), 5),
              (std::vector<std::string>{"nested one" + kEod, "nested two" + kEod}));

    write_file(
        path("chat.jsonl"),
        R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]})"
        "\n");
    r = tokenize("--input " + path("chat.jsonl") + " --key messages.1.content --output-prefix " +
                 path("chat"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("chat"), 5), std::vector<std::string>{"hello there"});
}

TEST_F(DataCli, TemplateJoinsSeveralFields) {
    write_file(path("in.jsonl"),
               json{{"instruction", "Translate to French"}, {"output", "Bonjour"}}.dump() + "\n" +
                   json{{"instruction", "数一数"}, {"output", "一二三"}, {"extra", 1}}.dump() +
                   "\n");
    auto r = tokenize("--input " + path("in.jsonl") +
                      " --template '{instruction}\\n{output}' --append-eod --output-prefix " +
                      path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(
        decoded(path("out"), 5),
        (std::vector<std::string>{"Translate to French\nBonjour" + kEod, "数一数\n一二三" + kEod}));
    const auto meta = json::parse(slurp(path("out.meta.json")));
    EXPECT_EQ(meta["fields"], (json{"instruction", "output"}));
}

TEST_F(DataCli, LinesFormatMakesOneDocumentPerNonBlankLine) {
    write_file(path("in.txt"), "first line\n\nsecond  line with 你好\r\n   \nthird\n");
    auto r = tokenize("--input " + path("in.txt") +
                      " --input-format lines --append-eod --output-prefix " + path("out"));
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
                      " --input-format text --append-eod --output-prefix " + path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(decoded(path("out"), 10), (std::vector<std::string>{a + kEod, b + kEod}));
}

// ---- 6. llm.c shards ---------------------------------------------------------------------------

TEST_F(DataCli, LlmcShardsSplitAtShardTokensAndVerifyAndInspectAcceptThem) {
    write_file(path("in.jsonl"), jsonl({"the other thing", "in here"}));  // 12 + 6 tokens
    const std::string prefix = path("llmc");
    auto r = tokenize("--input " + path("in.jsonl") +
                      " --append-eod --shard-format llmc --shard-tokens 5 --output-prefix " +
                      prefix + " --json");
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

TEST_F(DataCli, OneLlmcShardIsNamedAsItsFileAndReadWithTheDatasetsTokenizer) {
    write_file(path("in.jsonl"), jsonl({"the other thing", "in here"}));  // 12 + 6 tokens
    const std::string prefix = path("llmc");
    auto r =
        tokenize("--input " + path("in.jsonl") +
                 " --append-eod --shard-format llmc --shard-tokens 5 --output-prefix " + prefix);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string shard = path("llmc_000001.bin");

    // Shard 1 given alone is shard 1, and llmc.meta.json (not llmc_000001.bin.meta.json) names
    // the tokenizer, so no --tokenizer is needed to decode it.
    auto text = run_trainrig("data inspect " + shard);
    ASSERT_EQ(text.rc, 0) << text.err;
    EXPECT_NE(text.out.find("\nshard 1 (llmc_000001.bin, 5 tokens): \""), std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("pass --tokenizer"), std::string::npos) << text.out;
    const json doc = inspect_json(shard, 1);
    ASSERT_EQ(doc["previews"].size(), 1u);
    EXPECT_EQ(doc["previews"][0]["index"], 1);
    EXPECT_EQ(doc["previews"][0]["file"], shard);
    EXPECT_TRUE(doc["previews"][0].contains("text")) << doc.dump();

    // llm.c shards have no documents, pointers or document indices to vouch for.
    auto v = run_trainrig("data verify " + shard);
    ASSERT_EQ(v.rc, 0) << v.out << v.err;
    EXPECT_EQ(v.out.find("documents"), std::string::npos) << v.out;
    EXPECT_EQ(v.out.find("pointers"), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("headers, sizes and token range check out"), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("vocabulary " + std::to_string(tiny_.vocab_size())), std::string::npos)
        << v.out;

    // A shard cut short: no token could be read, so there is no largest id to print.
    write_file(shard, slurp(shard).substr(0, 500));
    auto cut = run_trainrig("data verify " + shard);
    EXPECT_EQ(cut.rc, 1) << cut.out << cut.err;
    EXPECT_NE(cut.out.find("shorter than llm.c's 1024-byte header"), std::string::npos) << cut.out;
    EXPECT_EQ(cut.out.find("largest id"), std::string::npos) << cut.out;
    EXPECT_EQ(cut.out.find(" -1"), std::string::npos) << cut.out;
    auto cut_json = run_trainrig("data verify " + shard + " --json");
    EXPECT_EQ(cut_json.rc, 1) << cut_json.err;
    EXPECT_TRUE(json::parse(cut_json.out)["max_token"].is_null()) << cut_json.out;
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
                          path("in.jsonl") + " --append-eod --output-prefix " + path("out"));
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

// ---- bench run tokenizer / bench run loader -----------------------------------------------------

TEST_F(DataCli, BenchTokenizerReportsEveryUnitPerThreadCount) {
    std::string text;
    for (uint64_t i = 0; i < 500; ++i) {
        std::string line = sample_text(i);
        std::replace(line.begin(), line.end(), '\n', ' ');  // documents/s counts lines
        text += line + "\n";
    }
    write_file(path("sample.txt"), text);
    auto r = run_trainrig("bench run tokenizer --tokenizer " + tokenizer_ + " --input " +
                          path("sample.txt") + " --tokenizer-threads 1,2 --repeats 2 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.bench");
    EXPECT_EQ(doc["errors"], json::array());
    // bytes/s, tokens/s and documents/s, for 1 and then 2 threads.
    ASSERT_EQ(doc["results"].size(), 6u);
    const std::vector<std::pair<std::string, std::string>> kinds = {
        {"bytes", "bytes/s"}, {"tokens", "tokens/s"}, {"documents", "documents/s"}};
    for (size_t i = 0; i < 6; ++i) {
        const json& rec = doc["results"][i];
        EXPECT_EQ(rec["bench"], "tokenizer");
        EXPECT_EQ(rec["name"], kinds[i % 3].first) << rec.dump();
        EXPECT_EQ(rec["unit"], kinds[i % 3].second) << rec.dump();
        EXPECT_EQ(rec["params"]["threads"], i < 3 ? 1 : 2) << rec.dump();
        EXPECT_EQ(rec["samples"].size(), 2u);
        EXPECT_GT(rec["median"].get<double>(), 0.0);
        EXPECT_EQ(rec["status"], "info");  // no hardware figure to expect
        EXPECT_EQ(rec["counted"]["bytes"], text.size());
        EXPECT_EQ(rec["counted"]["documents"], 500);
    }
    // The tokens counted per run are the tokens of the text, as `data tokenize` counts them.
    tokenize_texts({text}, path("whole"), "");
    EXPECT_EQ(doc["results"][0]["counted"]["tokens"], inspect_json(path("whole"), 0)["tokens"]);
}

// Asked for by name, a benchmark that cannot run exits 2 (docs/cli.md), saying why.
// --tokenizer without the --input text it encodes is a mistake in the line, refused before
// anything runs (as validate refuses it), in one sentence.
TEST_F(DataCli, BenchTokenizerWithoutItsInputsIsRefused) {
    auto r = run_trainrig("bench run tokenizer --tokenizer " + tokenizer_ + " --json");
    ASSERT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("trainrig bench run: --tokenizer and --input go together"),
              std::string::npos)
        << r.err;
}

TEST_F(DataCli, BenchLoaderMeasuresBatchesOfWindowsPlusOne) {
    std::vector<std::string> texts;
    for (uint64_t i = 0; i < 200; ++i) texts.push_back(sample_text(i));
    tokenize_texts(texts, path("data"));
    auto r = run_trainrig("bench run loader --shards " + path("data") +
                          " --batch 2 --window 8 --steps 5 --repeats 3 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["results"].size(), 3u);
    const std::vector<std::pair<std::string, std::string>> kinds = {
        {"tokens", "tokens/s"}, {"bytes", "bytes/s"}, {"batches", "batches/s"}};
    for (size_t i = 0; i < 3; ++i) {
        const json& rec = doc["results"][i];
        EXPECT_EQ(rec["bench"], "loader");
        EXPECT_EQ(rec["name"], kinds[i].first) << rec.dump();
        EXPECT_EQ(rec["unit"], kinds[i].second) << rec.dump();
        EXPECT_EQ(rec["samples"].size(), 3u);
        EXPECT_EQ(rec["params"]["batch"], 2);
        EXPECT_EQ(rec["params"]["window"], 8);
        EXPECT_EQ(rec["params"]["steps"], 5);
        EXPECT_EQ(rec["counted"]["tokens_per_batch"], 2 * 9);
        EXPECT_EQ(rec["counted"]["bytes_per_batch"], 2 * 9 * 4);
    }
    // Every sample is the same number of batches, so the three rates keep fixed proportions.
    const double tokens = doc["results"][0]["median"], bytes = doc["results"][1]["median"],
                 batches = doc["results"][2]["median"];
    EXPECT_NEAR(bytes, 4 * tokens, 1e-6 * bytes);
    EXPECT_NEAR(tokens, 18 * batches, 1e-6 * tokens);

    // A batch larger than the corpus: the benchmark cannot run, and the run says so.
    auto small = run_trainrig("bench run loader --shards " + path("data") +
                              " --batch 100000 --window 8 --json");
    EXPECT_EQ(small.rc, 2);
    const json failed = json::parse(small.out);
    EXPECT_EQ(failed["exit_code"], 2);
    ASSERT_EQ(failed["errors"].size(), 1u) << failed.dump(2);
    EXPECT_EQ(failed["errors"][0]["bench"], "loader");
    EXPECT_NE(failed["errors"][0]["error"].get<std::string>().find("fewer than one step needs"),
              std::string::npos)
        << failed.dump(2);
}

// validate's data-path stage runs the same two benchmarks on the user's tokenizer, text and
// shards (docs/report.md), and leaves the other stages to their own tests.
TEST_F(DataCli, ValidateMeasuresTheDataPathOnTheUsersTokenizerTextAndShards) {
    std::vector<std::string> texts;
    std::string text;
    for (uint64_t i = 0; i < 2000; ++i) {
        texts.push_back(sample_text(i));
        std::string line = texts.back();
        std::replace(line.begin(), line.end(), '\n', ' ');
        text += line + "\n";
    }
    write_file(path("sample.txt"), text);
    tokenize_texts(texts, path("data"));
    auto r = run_trainrig(
        "validate --json --no-report --skip host-bench,gpu-bench,training,watch "
        "--tokenizer " +
        tokenizer_ + " --input " + path("sample.txt") + " --shards " + path("data"));
    const json doc = json::parse(r.out);
    for (const auto& s : doc["stages"])
        if (s["name"] == "data-path") {
            EXPECT_EQ(s["state"], "ran") << s;
        }
    std::map<std::string, json> rec;
    for (const auto& x : doc["bench"]["results"])
        rec[x["bench"].get<std::string>() + "." + x["name"].get<std::string>()] = x;
    ASSERT_TRUE(rec.count("tokenizer.tokens")) << doc["bench"].dump(1);
    EXPECT_EQ(rec["tokenizer.bytes"]["counted"]["bytes"], text.size());
    EXPECT_EQ(rec["tokenizer.documents"]["counted"]["documents"], 2000);
    ASSERT_TRUE(rec.count("loader.tokens")) << doc["bench"].dump(1);
    EXPECT_EQ(rec["loader.tokens"]["params"]["corpus_tokens"],
              inspect_json(path("data"), 0)["tokens"]);
    EXPECT_EQ(rec["loader.tokens"]["samples"].size(), 3u);  // quick: 3 repeats
    EXPECT_GT(rec["loader.tokens"]["median"].get<double>(), 0.0);
}

// --tokenizer without --input (or the reverse) is a mistake, said before anything runs.
TEST_F(DataCli, ValidateRefusesATokenizerWithoutText) {
    auto r = run_trainrig("validate --no-report --tokenizer " + tokenizer_);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--tokenizer and --input go together"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainrig::test

// `trainrig data` when things go wrong: bad records, runs that fail (bad line, full disk, Ctrl-C)
// leaving the previous output as it was, verify finding corruption, command-line errors.
#include "data_cli_fixture.h"

namespace trainrig::test {
namespace {

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
    auto r = tokenize("--input " + path("bad.jsonl") +
                      " --workers 2 --batch-bytes 4096 --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 3001 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("JSON"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, MissingKeyNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine"}) + R"({"content":"no text key"})"
                                                    "\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 2 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"text\""), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, NonStringValueNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine", "also fine"}) + R"({"text":["a","list"]})"
                                                                 "\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 3 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not a string"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, InvalidUtf8InsideJsonNamesFileAndLineAndWritesNothing) {
    write_file(path("bad.jsonl"), jsonl({"fine"}) + "{\"text\":\"caf\xe9 latin-1\"}\n");
    auto r = tokenize("--input " + path("bad.jsonl") + " --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path("bad.jsonl") + " line 2 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, InvalidUtf8InALinesFileNamesLineAndByteAndWritesNothing) {
    write_file(path("bad.txt"), "fine\nab\xc3(cd\n");
    auto r = tokenize("--input " + path("bad.txt") + " --input-format lines --output-prefix " +
                      path("out"));
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
        auto r = tokenize("--input " + path(name) + " --output-prefix " + path("out"));
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
    auto r =
        tokenize("--input " + in + " --on-error skip --append-eod --output-prefix " + path("out"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("skipped 4 records"), std::string::npos) << r.out;
    for (const char* line : {" line 2: ", " line 3: ", " line 4: ", " line 6: "})
        EXPECT_NE(r.out.find(in + line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(decoded(path("out"), 10),
              (std::vector<std::string>{"good one" + kEod, "good two" + kEod}));
    EXPECT_EQ(json::parse(slurp(path("out.meta.json")))["skipped"], 4);

    auto j =
        tokenize("--input " + in + " --on-error skip --output-prefix " + path("out2") + " --json");
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
    auto r = tokenize("--input " + path("bad.jsonl") + " --append-eod --output-prefix " + out);
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
    auto r = tokenize("--input " + path("big.jsonl") + " --append-eod --output-prefix " + out +
                      " --json");
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
                    path("in.jsonl") + " --append-eod --output-prefix " + out + "\"");
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(out), std::string::npos) << r.err;
    EXPECT_TRUE(snapshot(out) == before) << "the previous output changed";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    // The same input fits without the limit.
    auto ok = tokenize("--input " + path("in.jsonl") + " --output-prefix " + path("fits"));
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
                "--workers", "2", "--output-prefix", out.c_str(), static_cast<char*>(nullptr));
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
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);  // as every command, after cleaning up
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
    auto r = tokenize("--input " + path("in.jsonl") +
                      " --key text --template '{text}' --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("--key and --template"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, OutputInsteadOfOutputPrefixSaysWhichIsWhich) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = tokenize("--input " + path("in.jsonl") + " --output " + path("shards"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("the shards' prefix is --output-prefix"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("-o/--output " + path("shards") + " is the summary file"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("shards")));
    auto none = tokenize("--input " + path("in.jsonl"));
    EXPECT_EQ(none.rc, 2) << none.out;
    EXPECT_NE(none.err.find("--output-prefix is required"), std::string::npos) << none.err;
}

TEST_F(DataCli, UnknownTokenizerNameListsThePresets) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = run_trainrig("data tokenize --tokenizer no-such-tokenizer --input " +
                          path("in.jsonl") + " --output-prefix " + path("out"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("no-such-tokenizer"), std::string::npos) << r.err;
    for (const char* preset : {"gpt2", "cl100k", "o200k", "llama3"})
        EXPECT_NE(r.err.find(preset), std::string::npos) << preset << "\n" << r.err;
    expect_no_output(path("out"));
}

TEST_F(DataCli, PresetWithoutItsFilesNamesTheFolder) {
    write_file(path("in.jsonl"), jsonl({"x"}));
    auto r = run_trainrig("data tokenize --tokenizer gpt2 --input " + path("in.jsonl") +
                              " --output-prefix " + path("out"),
                          "TRAINRIG_TOKENIZERS=/nonexistent/tokenizers");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("/nonexistent/tokenizers"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TRAINRIG_TOKENIZERS"), std::string::npos) << r.err;
    expect_no_output(path("out"));
}

}  // namespace
}  // namespace trainrig::test

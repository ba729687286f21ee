// validate's measuring stages in a child: the limits, the `bench run` command line, and what each
// way a child can end means for the stage (read_stage_child is pure: no child needed).
#include "validate/stage_child.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

namespace trainrig::validate {
namespace {

bool has_pair(const std::vector<std::string>& a, const std::string& flag, const std::string& v) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
        if (a[i] == flag && a[i + 1] == v) return true;
    return false;
}

SupervisedRun ended(int exit_code, int signal, std::string out, std::string err = {}) {
    SupervisedRun r;
    r.output.exit_code = exit_code;
    r.output.signal = signal;
    r.output.out = std::move(out);
    r.output.err = std::move(err);
    return r;
}

const char* kDoc =
    R"({"schema": "trainrig.bench", "machine": {}, "results": [{"bench": "loader",
        "name": "tokens", "unit": "tokens/s", "samples": [1.0, 2.0, 3.0]}],
        "skipped": [{"bench": "tokenizer", "reason": "needs --tokenizer and --input"}],
        "errors": []})";

TEST(StageLimits, ThreeBudgetsAndAMinuteUnlessOverridden) {
    auto l = stage_limits(60, 0);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 240);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 30);  // a quarter would be 60: capped
    l = stage_limits(5, 0);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 75);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 18.75);
    l = stage_limits(900, 2);
    EXPECT_DOUBLE_EQ(l.timeout_seconds, 2);
    EXPECT_DOUBLE_EQ(l.grace_seconds, 1);  // a quarter would be 0.5: at least a second
}

TEST(BenchRunArgs, EveryOptionTheStageSetIsPassed) {
    bench::BenchOptions o;
    o.quick = true;
    o.repeats = 3;
    o.array_bytes = 64ull << 20;
    o.data_dir = "/data";
    o.gpus = {0, 3};
    o.tokenizer = "gpt2";
    o.inputs = {"a.txt", "b.txt"};
    o.shards = {"s_000000.bin"};
    o.steps = 1000;
    o.train_seq = 64;
    const auto a = bench_run_args({"cpu-mem", "loader"}, o);
    ASSERT_GE(a.size(), 6u);
    EXPECT_EQ(std::vector<std::string>(a.begin(), a.begin() + 4),
              (std::vector<std::string>{"bench", "run", "cpu-mem", "loader"}));
    for (const char* f : {"--json", "--keep-partial", "--quick"})
        EXPECT_NE(std::find(a.begin(), a.end(), f), a.end()) << f;
    EXPECT_TRUE(has_pair(a, "--repeats", "3"));
    EXPECT_TRUE(has_pair(a, "--array-bytes", std::to_string(64ull << 20)));
    EXPECT_TRUE(has_pair(a, "--data-dir", "/data"));
    EXPECT_TRUE(has_pair(a, "--gpus", "0,3"));
    EXPECT_TRUE(has_pair(a, "--tokenizer", "gpt2"));
    EXPECT_TRUE(has_pair(a, "--input", "a.txt"));
    EXPECT_TRUE(has_pair(a, "a.txt", "b.txt"));
    EXPECT_TRUE(has_pair(a, "--shards", "s_000000.bin"));
    EXPECT_TRUE(has_pair(a, "--steps", "1000"));
    EXPECT_TRUE(has_pair(a, "--train-seq", "64"));
    // Unset sizes are left to bench's defaults.
    EXPECT_EQ(std::find(a.begin(), a.end(), "--file-size"), a.end());
    EXPECT_EQ(std::find(a.begin(), a.end(), "--seconds"), a.end());
}

TEST(ReadStageChild, AFinishedChildGivesItsRecordsAndSkips) {
    const auto s = read_stage_child(ended(0, 0, kDoc));
    EXPECT_EQ(s.end, StageEnd::kFinished);
    ASSERT_EQ(s.run.records.size(), 1u);
    EXPECT_EQ(s.run.records[0].bench, "loader");
    EXPECT_EQ(s.run.records[0].samples.size(), 3u);
    ASSERT_EQ(s.run.skipped.size(), 1u);
    EXPECT_EQ(s.run.skipped[0].bench, "tokenizer");
}

TEST(ReadStageChild, StoppedAtItsLimitKeepsWhatItPrinted) {
    auto c = ended(143, 0, kDoc);
    c.timed_out = true;
    auto s = read_stage_child(c);
    EXPECT_EQ(s.end, StageEnd::kTimedOut);
    EXPECT_EQ(s.run.records.size(), 1u);
    // Ended by our SIGTERM before it could print: still timed out, not crashed.
    c = ended(-1, SIGTERM, "");
    c.timed_out = true;
    s = read_stage_child(c);
    EXPECT_EQ(s.end, StageEnd::kTimedOut);
    EXPECT_TRUE(s.run.records.empty());
}

TEST(ReadStageChild, KilledAfterTheGraceIsHung) {
    auto c = ended(-1, SIGKILL, "");
    c.timed_out = c.killed = true;
    EXPECT_EQ(read_stage_child(c).end, StageEnd::kHung);
}

TEST(ReadStageChild, ASignalNobodySentIsACrashNamedWithItsLastWords) {
    const auto s = read_stage_child(ended(-1, SIGSEGV, "", "bench: running gemm ...\n"));
    EXPECT_EQ(s.end, StageEnd::kCrashed);
    EXPECT_NE(s.detail.find("SIGSEGV"), std::string::npos) << s.detail;
    EXPECT_NE(s.detail.find("running gemm"), std::string::npos) << s.detail;
    // The kernel's OOM killer sends SIGKILL too: a crash when we did not ask.
    EXPECT_EQ(read_stage_child(ended(-1, SIGKILL, "")).end, StageEnd::kCrashed);
}

TEST(ReadStageChild, NoDocumentIsAFailureInTheChildsWords) {
    auto s =
        read_stage_child(ended(2, 0, "", "trainrig bench: --data-dir: /x: not a directory.\n"));
    EXPECT_EQ(s.end, StageEnd::kFailed);
    EXPECT_NE(s.detail.find("not a directory"), std::string::npos) << s.detail;
    s = read_stage_child(ended(0, 0, "{\"schema\": \"something.else\"}"));
    EXPECT_EQ(s.end, StageEnd::kFailed);
    EXPECT_NE(s.detail.find("not a trainrig.bench document"), std::string::npos) << s.detail;
    s = read_stage_child(Status{Errc::kNotFound, "trainrig is not installed"});
    EXPECT_EQ(s.end, StageEnd::kFailed);
    EXPECT_EQ(s.detail, "trainrig is not installed");
}

}  // namespace
}  // namespace trainrig::validate

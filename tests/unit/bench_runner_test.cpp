// run_benchmarks: what it does with a benchmark that does not apply, fails, or is a rank of a
// multi-process launch that another rank reports.
#include "bench/bench_runner.h"

#include <gtest/gtest.h>

namespace trainrig::bench {
namespace {

class FakeBench : public Benchmark {
public:
    FakeBench(const char* id, std::string skip, Status result, bool reports)
        : id_(id), skip_(std::move(skip)), result_(std::move(result)), reports_(reports) {}
    const char* id() const override { return id_; }
    const char* description() const override { return "a fake benchmark"; }
    std::string skip_reason(const BenchContext&) const override { return skip_; }
    Status run(const BenchContext&, std::vector<BenchRecord>&) override {
        ++runs;
        return result_;
    }
    bool reports_here() const override { return reports_; }
    int runs = 0;

private:
    const char* id_;
    std::string skip_;
    Status result_;
    bool reports_;
};

TEST(RunBenchmarks, SkippedAndFailedGoToTheirLists) {
    FakeBench skipped("fake-skip", "not here", {}, true);
    FakeBench failing("fake-fail", "", {Errc::kIo, "the disk went away"}, true);
    BenchRun run;
    EXPECT_TRUE(run_benchmarks({&skipped, &failing}, BenchContext{}, run));
    EXPECT_EQ(skipped.runs, 0);
    EXPECT_EQ(failing.runs, 1);
    ASSERT_EQ(run.skipped.size(), 1u);
    EXPECT_EQ(run.skipped[0].text, "not here");
    ASSERT_EQ(run.errors.size(), 1u);
    EXPECT_EQ(run.errors[0].text, "the disk went away");
    EXPECT_EQ(run.exit_code(), 2);
    EXPECT_TRUE(run.reporting);
}

TEST(RunBenchmarks, OneBenchmarkThatAnotherRankReportsSilencesTheRun) {
    FakeBench mine("fake-mine", "", {}, true);
    FakeBench rank_one("fake-rank", "", {}, false);
    BenchRun run;
    EXPECT_TRUE(run_benchmarks({&rank_one, &mine}, BenchContext{}, run));
    EXPECT_FALSE(run.reporting);
    EXPECT_EQ(run.exit_code(), 0);
}

TEST(RunBenchmarks, ASkippedBenchmarkDoesNotDecideWhoReports) {
    FakeBench skipped("fake-skip", "not under a launcher", {}, false);
    BenchRun run;
    EXPECT_TRUE(run_benchmarks({&skipped}, BenchContext{}, run));
    EXPECT_TRUE(run.reporting);
}

}  // namespace
}  // namespace trainrig::bench

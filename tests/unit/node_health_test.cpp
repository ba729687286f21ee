// The scheduler health checks: reading the latest validate report, judging a machine tree, and
// the one line a scheduler shows (health/node_health.h).
#include "health/node_health.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/utc_time.h"
#include "health/budget_alarm.h"
#include "health/cached_report.h"
#include "temp_dir_test.h"

namespace trainrig::health {
namespace {

namespace fs = std::filesystem;

const fs::path kMachines = fs::path(TRAINRIG_SOURCE_DIR) / "tests/fixtures/machines";

void write_report(const fs::path& dir, const std::string& host, const std::string& finished,
                  const std::string& items, const std::string& schema = "trainrig.validate",
                  bool incomplete = false) {
    fs::create_directories(dir);
    std::ofstream(dir / "report.json")
        << R"({"schema": ")" << schema << R"(", "host": ")" << host
        << R"(", "verdict": "NOT READY", "finished_at": ")" << finished << R"(", "incomplete": )"
        << (incomplete ? "true" : "false") << R"(, "items": )" << items << "}";
}

const char* kBenchFail =
    R"([{"id": "bench.gemm.bf16", "stage": "gpu-bench", "level": "fail", "summary": "GPU 3 at 61 % of peak"},
        {"id": "gpu.temperature", "stage": "doctor", "level": "fail", "summary": "GPU 1 at 91 C"},
        {"id": "bench.h2d", "stage": "gpu-bench", "level": "warn", "summary": "slow"}])";

TEST(UtcTime, ParsesWhatItPrints) {
    EXPECT_EQ(parse_utc_iso8601(utc_iso8601(1764750000)), 1764750000);
    EXPECT_EQ(parse_utc_iso8601("2026-12-03T10:00:00Z"), std::time_t{1796292000});
    EXPECT_FALSE(parse_utc_iso8601("2026-12-03 10:00:00"));
    EXPECT_FALSE(parse_utc_iso8601("2026-13-03T10:00:00Z"));
    EXPECT_FALSE(parse_utc_iso8601("2026-12-03T10:00:00Zjunk"));
    EXPECT_FALSE(parse_utc_iso8601(""));
}

TEST(ProblemLine, IdFirstOneLineCutToTheLimit) {
    EXPECT_EQ(problem_line({"gpu.ecc", "2 uncorrectable\nerrors"}, 80),
              "gpu.ecc 2 uncorrectable errors");
    EXPECT_EQ(problem_line({"gpu.ecc", ""}, 80), "gpu.ecc");
    const std::string cut = problem_line({"gpu.pcie-link", std::string(200, 'x')}, 80);
    EXPECT_EQ(cut.size(), 80u);
    EXPECT_TRUE(cut.starts_with("gpu.pcie-link xxx"));
    EXPECT_TRUE(cut.ends_with("..."));
    // "°" is two bytes: never cut in the middle of it.
    std::string degrees;
    for (int i = 0; i < 50; ++i) degrees += "\xC2\xB0";
    const std::string utf8 = problem_line({"gpu.temperature", degrees}, 40);
    EXPECT_LE(utf8.size(), 40u);
    EXPECT_EQ(utf8.substr(utf8.size() - 5), "\xC2\xB0...");
}

// The guard behind every deadline: past the budget the process ends with 2 (unknown, nothing
// changed) and says where the time went.
TEST(BudgetAlarmDeathTest, EndsTheProcessWithUnknown) {
    EXPECT_EXIT(
        {
            BudgetAlarm alarm(1, "slurm healthcheck");
            alarm.phase("asking slurmctld");
            ::sleep(10);
        },
        ::testing::ExitedWithCode(2),
        "trainrig slurm healthcheck: the 1 s budget ran out while asking slurmctld; nothing "
        "was changed");
}

TEST(BudgetAlarm, DisarmedWhenDone) {
    { BudgetAlarm alarm(5, "npd"); }
    EXPECT_EQ(::alarm(0), 0u);  // no alarm left pending
}

TEST(HealthChecks, AreDoctorChecks) {
    for (const auto& id : health_check_ids()) EXPECT_NE(find_rule(id), nullptr) << id;
}

class CachedReportTest : public test::TempDirTest {};

TEST_F(CachedReportTest, TakesTheNewestReportsFailedMeasurementsOnly) {
    write_report(dir_ / "a", "node01", "2026-12-01T10:00:00Z", "[]");
    write_report(dir_ / "b", "node01", "2026-12-02T10:00:00Z", kBenchFail);
    write_report(dir_ / "c", "node01", "2026-11-30T10:00:00Z", "[]");
    auto r = read_cached_report(dir_.string());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->path, (dir_ / "b" / "report.json").string());
    ASSERT_EQ(r->failed.size(), 1u);  // not the doctor item, not the warning
    EXPECT_EQ(r->failed[0].id, "bench.gemm.bf16");
    // The directory itself and its report.json read the same.
    EXPECT_EQ(read_cached_report((dir_ / "b").string())->failed.size(), 1u);
    EXPECT_EQ(read_cached_report((dir_ / "b" / "report.json").string())->failed.size(), 1u);
}

TEST_F(CachedReportTest, AnInterruptedReportIsNeverAReasonToAct) {
    // A report of validate as 1824ef2 wrote it when Ctrl-C stopped the training stage: failures
    // invented from a run stopped after one step, in a report marked incomplete.
    write_report(dir_ / "cut", "node01", "2026-12-02T10:00:00Z", kBenchFail, "trainrig.validate",
                 true);
    auto cut = read_cached_report((dir_ / "cut").string());
    ASSERT_TRUE(cut.ok()) << cut.status().message();
    EXPECT_TRUE(cut->incomplete);
    EXPECT_TRUE(cut->failed.empty());
    // In a folder, a report that finished whole wins over a newer interrupted one.
    write_report(dir_ / "whole", "node01", "2026-12-01T10:00:00Z", "[]");
    auto r = read_cached_report(dir_.string());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->path, (dir_ / "whole" / "report.json").string());
    EXPECT_FALSE(r->incomplete);
}

TEST_F(CachedReportTest, NoneForeignOrCutShortIsSaid) {
    EXPECT_EQ(read_cached_report((dir_ / "absent").string()).status().code(), Errc::kNotFound);
    EXPECT_EQ(read_cached_report(dir_.string()).status().code(), Errc::kNotFound);
    write_report(dir_ / "x", "node01", "2026-12-01T10:00:00Z", "[]", "trainrig.doctor");
    EXPECT_EQ(read_cached_report((dir_ / "x").string()).status().code(), Errc::kInvalidInput);
    write_report(dir_ / "y", "node01", "", "[]");
    EXPECT_EQ(read_cached_report((dir_ / "y").string()).status().code(), Errc::kInvalidInput);
    fs::create_directories(dir_ / "z");
    std::ofstream(dir_ / "z" / "report.json") << R"({"schema": "trainrig.validate", "host)";
    EXPECT_EQ(read_cached_report((dir_ / "z").string()).status().code(), Errc::kInvalidInput);
}

class CheckHealthTest : public test::TempDirTest {
protected:
    HealthOptions tree(const char* name) {
        HealthOptions o;
        o.collect.root = kMachines / name;
        o.now = *parse_utc_iso8601("2026-12-03T10:00:00Z");
        return o;
    }
};

TEST_F(CheckHealthTest, HealthyTreeIsHealthy) {
    auto r = check_health(tree("epyc-4xa100-healthy"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kHealthy);
    EXPECT_EQ(r->checks, health_check_ids().size());
    EXPECT_EQ(health_exit_code(r->health), 0);
}

TEST_F(CheckHealthTest, BrokenTreeNamesItsFirstFailure) {
    auto r = check_health(tree("article-box"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kUnhealthy);
    ASSERT_FALSE(r->failures.empty());
    EXPECT_EQ(r->failures[0].id, "pci.gpu-visible");
    EXPECT_EQ(health_exit_code(r->health), 1);
    // Tuning checks never make a node unhealthy: article-box fails swappiness in doctor.
    for (const auto& f : r->failures) EXPECT_FALSE(f.id.starts_with("kernel.")) << f.id;
}

TEST_F(CheckHealthTest, SelectionNarrowsTheChecks) {
    auto o = tree("article-box");
    o.selection.skip = {"pci.gpu-visible", "pci.gpu-bar", "pci.gpu-link", "kmsg.xid"};
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kHealthy);
    EXPECT_EQ(r->checks, health_check_ids().size() - 4);
}

TEST_F(CheckHealthTest, ARecentReportsFailedBenchmarkMakesItUnhealthy) {
    auto o = tree("epyc-4xa100-healthy");
    write_report(dir_ / "r", "a100-node01", "2026-12-02T10:00:00Z", kBenchFail);
    o.report = dir_.string();
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kUnhealthy);
    ASSERT_EQ(r->failures.size(), 1u);
    EXPECT_EQ(r->failures[0].id, "bench.gemm.bf16");
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("NOT READY"), std::string::npos);
}

TEST_F(CheckHealthTest, AnInterruptedReportDrainsNothing) {
    auto o = tree("epyc-4xa100-healthy");
    write_report(dir_ / "r", "a100-node01", "2026-12-02T10:00:00Z", kBenchFail, "trainrig.validate",
                 true);
    o.report = dir_.string();
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kHealthy);
    EXPECT_TRUE(r->failures.empty());
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("interrupted"), std::string::npos) << r->notes[0];
}

// A node drained in 3 of its last 4 reports is a lemon: unhealthy although its newest report
// passed, with the check it failed most; moving the old reports out (the operator's repair)
// clears it.
TEST_F(CheckHealthTest, ALemonStaysUnhealthyUntilItsOldReportsAreMovedOut) {
    auto o = tree("epyc-4xa100-healthy");
    const char* ecc =
        R"([{"id": "gpu.ecc", "stage": "doctor", "level": "fail", "summary": "DBE"}])";
    write_report(dir_ / "a", "a100-node01", "2026-11-20T10:00:00Z", ecc);
    write_report(dir_ / "b", "a100-node01", "2026-11-25T10:00:00Z", ecc);
    write_report(dir_ / "c", "a100-node01", "2026-11-30T10:00:00Z", ecc);
    write_report(dir_ / "other", "a100-node02", "2026-11-30T10:00:00Z", ecc);
    fs::create_directories(dir_ / "d");
    std::ofstream(dir_ / "d" / "report.json")
        << R"({"schema": "trainrig.validate", "host": "a100-node01", "verdict": "READY", )"
        << R"("finished_at": "2026-12-02T10:00:00Z", "incomplete": false, "items": []})";
    o.report = dir_.string();
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kUnhealthy);
    ASSERT_EQ(r->failures.size(), 1u);
    EXPECT_EQ(r->failures[0].id, "lemon");
    EXPECT_EQ(r->failures[0].detail, "gpu.ecc: drained in 3 of its last 4 reports within 30 days");
    EXPECT_EQ(problem_line(r->failures[0], 80).rfind("lemon gpu.ecc: drained in 3", 0), 0u);
    fs::remove_all(dir_ / "a");
    r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kHealthy);
}

TEST_F(CheckHealthTest, AStaleReportIsNotUsed) {
    auto o = tree("epyc-4xa100-healthy");
    write_report(dir_ / "r", "a100-node01", "2026-11-01T10:00:00Z", kBenchFail);
    o.report = dir_.string();
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kHealthy);
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("not used"), std::string::npos);
}

TEST_F(CheckHealthTest, AnotherHostsOrAnUnreadableReportCannotBeJudged) {
    auto o = tree("epyc-4xa100-healthy");
    write_report(dir_ / "r", "someone-else", "2026-12-02T10:00:00Z", "[]");
    o.report = (dir_ / "r").string();
    auto r = check_health(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->health, Health::kUnknown);
    EXPECT_EQ(health_exit_code(r->health), 2);
    write_report(dir_ / "s", "a100-node01", "2026-12-02T10:00:00Z", "[]", "other.schema");
    o.report = (dir_ / "s").string();
    EXPECT_EQ(check_health(o)->health, Health::kUnknown);
    // No report at all is only a note: doctor's checks still judge the node.
    o.report = (dir_ / "none").string();
    EXPECT_EQ(check_health(o)->health, Health::kHealthy);
}

}  // namespace
}  // namespace trainrig::health

// The SQLite history and the report built from it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir_test.h"
#include "watch/history.h"
#include "watch/watch_report.h"

namespace trainrig::watch {
namespace {

namespace fs = std::filesystem;

class HistoryTest : public test::TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        db_ = (dir_ / "w.db").string();
    }
    std::string db_;
};

std::vector<GpuIdentity> two() {
    return {{0, "GPU-a", "H100", "0000:41:00.0"}, {1, "GPU-b", "H100", "0000:c1:00.0"}};
}

NodeSample tick(double t, double u0, double u1, double temp0 = 70) {
    NodeSample n;
    n.time = t;
    for (unsigned i = 0; i < 2; ++i) {
        GpuSample g;
        g.index = i;
        g.utilization = i == 0 ? u0 : u1;
        g.temperature_celsius = i == 0 ? temp0 : 60;
        g.energy_joules = 1000 + t * 500;            // 500 W
        g.clock_event_reasons = i == 0 ? 0x4 : 0x0;  // GPU 0 at its power cap
        n.gpus.push_back(g);
    }
    return n;
}

TEST_F(HistoryTest, StoresTicksAndAlertsAndReadsThemBack) {
    auto h = History::open(db_);
    ASSERT_TRUE(h) << h.status().message();
    for (int t = 0; t < 10; ++t)
        ASSERT_TRUE(h.value().record(tick(1000 + t, 0.9, 0.8), two()).ok());
    Alert a;
    a.rule = "gpu-temperature";
    a.gpu = 1;
    a.uuid = "GPU-b";
    a.since = 1003;
    a.at = 1005;
    a.value = 81;
    a.summary = "GPU 1: hot";
    a.remedy = "cool it";
    ASSERT_TRUE(h.value().record_alert(a).ok());
    auto samples = h.value().samples_since(1005);
    ASSERT_TRUE(samples);
    ASSERT_EQ(samples->size(), 10u);  // 5 ticks x 2 GPUs
    EXPECT_EQ((*samples)[0].time, 1005);
    EXPECT_EQ(*(*samples)[1].utilization, 0.8);
    auto alerts = h.value().alerts_since(0);
    ASSERT_TRUE(alerts);
    ASSERT_EQ(alerts->size(), 1u);
    EXPECT_EQ((*alerts)[0].rule, "gpu-temperature");
    EXPECT_EQ(*(*alerts)[0].value, 81);
    EXPECT_EQ((*alerts)[0].gpu, 1);
    auto ids = h.value().gpus();
    ASSERT_TRUE(ids);
    ASSERT_EQ(ids->size(), 2u);
    EXPECT_EQ((*ids)[1].uuid, "GPU-b");
}

TEST_F(HistoryTest, KernelLogPositionBelongsToItsBoot) {
    {
        auto h = History::open(db_);
        ASSERT_TRUE(h);
        ASSERT_TRUE(h.value().save_kmsg_position("boot-1", 4242).ok());
    }
    auto h = History::open(db_);  // reopened, as after a restart
    ASSERT_TRUE(h);
    EXPECT_EQ(h.value().kmsg_position("boot-1"), 4242u);
    EXPECT_FALSE(h.value().kmsg_position("boot-2"));  // rebooted: start from the ring's start
}

TEST_F(HistoryTest, PrunesByAgeAndBySize) {
    HistoryLimits limits;
    limits.max_age_seconds = 100;
    auto h = History::open(db_, limits);
    ASSERT_TRUE(h);
    for (int t = 0; t < 300; ++t) ASSERT_TRUE(h.value().record(tick(t, 0.9, 0.9), two()).ok());
    ASSERT_TRUE(h.value().prune(299).ok());
    auto left = h.value().samples_since(0);
    ASSERT_TRUE(left);
    EXPECT_EQ(left->front().time, 199);
    // Size: ~20,000 ticks are well over 256 KiB; pruning brings the file under it.
    HistoryLimits small;
    small.max_bytes = 256 * 1024;
    auto big = History::open((dir_ / "big.db").string(), small);
    ASSERT_TRUE(big);
    for (int t = 0; t < 20000; ++t) ASSERT_TRUE(big.value().record(tick(t, 0.9, 0.9), two()).ok());
    ASSERT_TRUE(big.value().prune(20000).ok());
    auto kept = big.value().samples_since(0);
    ASSERT_TRUE(kept);
    EXPECT_LT(kept->size(), 40000u);
    EXPECT_EQ(kept->back().time, 19999);                     // the newest ticks stay
    EXPECT_LE(fs::file_size(dir_ / "big.db"), 400u * 1024);  // space given back (plus the WAL)
}

TEST_F(HistoryTest, FullDiskIsAnErrorAndNothingHalfWritten) {
    auto h = History::open(db_);
    ASSERT_TRUE(h);
    ASSERT_TRUE(h.value().record(tick(0, 0.9, 0.9), two()).ok());
    h.value().limit_pages_for_test(1);
    Status s;
    for (int t = 1; t < 2000 && s.ok(); ++t) s = h.value().record(tick(t, 0.9, 0.9), two());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("full"), std::string::npos) << s.message();
    EXPECT_FALSE(s.next_step().empty());
    auto rows = h.value().samples_since(0);
    ASSERT_TRUE(rows);
    EXPECT_EQ(rows->size() % 2, 0u);  // whole ticks only
}

TEST_F(HistoryTest, AFileThatIsNotAHistoryIsRefused) {
    std::ofstream(db_) << "not a database at all, just text that goes on for a while\n";
    auto h = History::open(db_);
    ASSERT_FALSE(h);
    EXPECT_NE(h.status().message().find(db_), std::string::npos);
}

TEST_F(HistoryTest, AnotherSqliteDatabaseIsLeftAlone) {
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "CREATE TABLE jobs (id INTEGER)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(other);
    auto h = History::open(db_);
    ASSERT_FALSE(h);
    EXPECT_NE(h.status().message().find("is not a trainrig watch history"), std::string::npos)
        << h.status().message();
}

TEST_F(HistoryTest, ReadingChangesNothing) {
    EXPECT_FALSE(History::open_to_read(db_));  // absent: not created
    EXPECT_FALSE(fs::exists(db_));
    {
        auto h = History::open(db_);
        ASSERT_TRUE(h);
        ASSERT_TRUE(h.value().record(tick(5, 0.9, 0.9), two()).ok());
    }
    const auto before = fs::last_write_time(db_);
    auto r = History::open_to_read(db_);
    ASSERT_TRUE(r) << r.status().message();
    auto rows = r.value().samples_since(0);
    ASSERT_TRUE(rows);
    EXPECT_EQ(rows->size(), 2u);
    EXPECT_EQ(fs::last_write_time(db_), before);
}

TEST_F(HistoryTest, AGpuThatAnswersWithBlanksKeepsItsStoredIdentity) {
    // Restarted after GPU 1 was lost: NVML gives it no UUID, name or bus id any more.
    {
        auto h = History::open(db_);
        ASSERT_TRUE(h);
        ASSERT_TRUE(h.value().record(tick(5, 0.9, 0.9), two()).ok());
    }
    auto h = History::open(db_);
    ASSERT_TRUE(h);
    auto lost = two();
    lost[1] = {1, "", "", ""};
    ASSERT_TRUE(h.value().record(tick(6, 0.9, 0.9), lost).ok());
    auto ids = h.value().gpus();
    ASSERT_TRUE(ids);
    ASSERT_EQ(ids->size(), 2u);
    EXPECT_EQ((*ids)[1].uuid, "GPU-b");
    EXPECT_EQ((*ids)[1].name, "H100");
    EXPECT_EQ((*ids)[1].bus_id, "0000:c1:00.0");
    // A GPU that does answer, with another identity (replaced), is stored as it says.
    auto swapped = two();
    swapped[1].uuid = "GPU-c";
    ASSERT_TRUE(h.value().record(tick(7, 0.9, 0.9), swapped).ok());
    EXPECT_EQ((*h.value().gpus())[1].uuid, "GPU-c");
}

TEST_F(HistoryTest, ReadingAfterAKilledWriterLeavesNoWalOrShm) {
    // A watch killed (SIGKILL, power loss) leaves db-wal and db-shm; the report, the last
    // connection to close, checkpoints and removes them.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto h = History::open(db_);
        if (!h || !h.value().record(tick(5, 0.9, 0.9), two()).ok()) ::_exit(1);
        ::_exit(0);  // never closed
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(fs::exists(db_ + "-wal"));
    {
        auto r = History::open_to_read(db_);
        ASSERT_TRUE(r) << r.status().message();
        auto rows = r.value().samples_since(0);
        ASSERT_TRUE(rows);
        EXPECT_EQ(rows->size(), 2u);
        EXPECT_FALSE(r.value().record(tick(6, 0.9, 0.9), two()).ok());  // reading writes nothing
    }
    EXPECT_FALSE(fs::exists(db_ + "-wal"));
    EXPECT_FALSE(fs::exists(db_ + "-shm"));
}

TEST(Spread, MinMedianMaxStddev) {
    const Spread s = spread_of({70, 71, 69, 70, 70});
    EXPECT_EQ(s.n, 5u);
    EXPECT_EQ(s.min, 69);
    EXPECT_EQ(s.median, 70);
    EXPECT_EQ(s.max, 71);
    EXPECT_NEAR(s.stddev, 0.7071, 1e-4);
    EXPECT_EQ(spread_of({}).n, 0u);
}

TEST_F(HistoryTest, ReportSummarisesTemperatureSkewThrottlingAndEnergy) {
    auto h = History::open(db_);
    ASSERT_TRUE(h);
    // An hour at 1 Hz: GPU 0 busy at 90 %, GPU 1 at 90 % for the first half, idle after; GPU 0's
    // temperature alternates 69/71 °C.
    for (int t = 0; t < 3600; ++t)
        ASSERT_TRUE(
            h.value().record(tick(t, 0.9, t < 1800 ? 0.9 : 0.0, t % 2 ? 71 : 69), two()).ok());
    auto r = build_report(h.value(), db_, 0, 3600);
    ASSERT_TRUE(r) << r.status().message();
    ASSERT_EQ(r->gpus.size(), 2u);
    const GpuSummary& g0 = r->gpus[0];
    EXPECT_EQ(g0.samples, 3600u);
    EXPECT_EQ(g0.temperature.min, 69);
    EXPECT_EQ(g0.temperature.max, 71);
    EXPECT_NEAR(g0.temperature.stddev, 1.0, 0.01);
    EXPECT_EQ(g0.power_cap_seconds, 3599);
    EXPECT_EQ(g0.thermal_slowdown_seconds, 0);
    EXPECT_NEAR(*g0.energy_joules, 3599 * 500.0, 1e-6);
    // With two GPUs the median sits halfway: in the second half both are 45 points off it.
    const GpuSummary& g1 = r->gpus[1];
    EXPECT_EQ(g1.busy_ticks, 1800u);  // the node is not busy once its median is 45 %
    EXPECT_EQ(g1.skew_mean, 0);
    EXPECT_EQ(g1.id.uuid, "GPU-b");
    const auto j = report_json(*r);
    EXPECT_EQ(j["schema"], "trainrig.watch.report");
    EXPECT_EQ(j["gpus"][0]["temperature_celsius"]["max"], 71);
    EXPECT_NE(render_report_text(*r).find("±1.0 C"), std::string::npos) << render_report_text(*r);
}

}  // namespace
}  // namespace trainrig::watch

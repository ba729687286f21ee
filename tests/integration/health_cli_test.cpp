// `trainrig slurm healthcheck` and `trainrig npd` on the same machine tree: one judgement, so one
// count of checks in the same words, and a dry run that says what it would do, once.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../unit/temp_dir_test.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

class HealthCli : public TempDirTest {
protected:
    // An empty folder: no validate report, the same for both commands.
    std::string common() const {
        return " --root " + fixture("cpu-only") + " --report " + dir_.string();
    }
};

TEST_F(HealthCli, SlurmAndNpdCountTheChecksInTheSameWords) {
    auto npd = run_trainrig("npd" + common());
    ASSERT_EQ(npd.rc, 0) << npd.out << npd.err;
    ASSERT_EQ(npd.out.rfind("ok: ", 0), 0u) << npd.out;
    const std::string counted = npd.out.substr(4, npd.out.find('\n') - 4);
    EXPECT_NE(counted.find("not applicable"), std::string::npos) << counted;

    // No scontrol to ask: a dry run assumes the node is not drained.
    auto slurm = run_trainrig("slurm healthcheck --dry-run --node node07 --scontrol " +
                              (dir_ / "no-scontrol").string() + common());
    ASSERT_EQ(slurm.rc, 0) << slurm.out << slurm.err;
    EXPECT_EQ(slurm.out, "node07: healthy (" + counted + ")\n");
}

TEST_F(HealthCli, AMaintenanceWindowDrainsNothingUntilItEnds) {
    // A copy of the broken box (a GPU off the bus, one at x8): unhealthy, exit 1.
    const auto root = dir_ / "box";
    std::filesystem::copy(
        fixture("article-box"), root,
        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    const std::string on = " --root " + root.string() + " --report " + (dir_ / "none").string();
    std::filesystem::create_directories(dir_ / "none");
    const std::string slurm = "slurm healthcheck --dry-run --node node07 --scontrol " +
                              (dir_ / "no-scontrol").string() + on;
    ASSERT_EQ(run_trainrig("npd" + on).rc, 1);

    auto start =
        run_trainrig("maintenance start --for 2h --reason 'reseat GPU 0' --root " + root.string());
    ASSERT_EQ(start.rc, 0) << start.err;
    EXPECT_EQ(start.out.rfind("maintenance until ", 0), 0u) << start.out;
    EXPECT_NE(start.out.find("reseat GPU 0"), std::string::npos) << start.out;
    auto npd = run_trainrig("npd" + on);
    EXPECT_EQ(npd.rc, 0) << npd.out << npd.err;
    EXPECT_EQ(npd.out.rfind("ok: maintenance until ", 0), 0u) << npd.out;
    EXPECT_LE(npd.out.find('\n'), 80u) << npd.out;
    auto held = run_trainrig(slurm + " --json");
    EXPECT_EQ(held.rc, 0) << held.out << held.err;
    const auto doc = nlohmann::json::parse(held.out);
    EXPECT_EQ(doc["action"]["kind"], "nothing");
    EXPECT_EQ(doc["health"], "unhealthy");  // still said
    EXPECT_EQ(doc["maintenance"]["reason"], "reseat GPU 0");
    EXPECT_NE(doc["action"]["message"].get<std::string>().find("nothing is drained"),
              std::string::npos);

    auto status = run_trainrig("maintenance status --json --root " + root.string());
    ASSERT_EQ(status.rc, 0) << status.err;
    const auto st = nlohmann::json::parse(status.out);
    EXPECT_TRUE(st["active"].get<bool>());
    EXPECT_GT(st["seconds_left"].get<double>(), 7000);

    ASSERT_EQ(run_trainrig("maintenance end --root " + root.string()).rc, 0);
    EXPECT_EQ(run_trainrig("npd" + on).rc, 1);
    EXPECT_EQ(run_trainrig(slurm).rc, 1);
    // A window longer than a week, or no length, is refused before anything is written.
    auto week = run_trainrig("maintenance start --for 8d --root " + root.string());
    EXPECT_EQ(week.rc, 2);
    EXPECT_NE(week.err.find("--for 8d is not a period from 1s to 7d"), std::string::npos)
        << week.err;
    EXPECT_FALSE(std::filesystem::exists(root / "var/lib/trainrig/maintenance.json"));
}

}  // namespace
}  // namespace trainrig::test

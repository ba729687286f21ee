// `trainrig fleet judge` as a user runs it: over snapshots (`collect`) and over validate report
// directories of fixture machine trees, with planted drift, a link at x8, a different machine
// and a truncated report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nvml(const std::string& machine) {
    return "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" +
           machine + ".json";
}

class FleetCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("fleet-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::map<std::string, json> states(const json& doc) {
        std::map<std::string, json> out;
        for (const auto& n : doc["nodes"]) out[n["name"]] = n;
        return out;
    }
    fs::path dir_;
};

TEST_F(FleetCli, SnapshotsWithDriftAnX8LinkAndATruncatedFile) {
    const auto collected =
        run_trainrig("collect --root " + fixture("hgx-8xh100"), nvml("hgx-8xh100"));
    ASSERT_EQ(collected.rc, 0) << collected.err;
    for (int i = 1; i <= 4; ++i) {
        json s = json::parse(collected.out);
        s["host"]["hostname"] = "node0" + std::to_string(i);
        if (i == 3) s["host"]["bios_version"] = "2.0";
        if (i == 4) s["nvml"]["gpus"][2]["pcie"]["width"] = 8;
        std::ofstream(dir_ / ("node0" + std::to_string(i) + ".json")) << s.dump();
    }
    std::ofstream(dir_ / "node05.json") << collected.out.substr(0, collected.out.size() / 2);
    auto r = run_trainrig("fleet judge --json " + dir_.string());
    EXPECT_EQ(r.rc, 1) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.fleet");
    auto st = states(doc);
    EXPECT_EQ(st["node01"]["state"], "READY");
    EXPECT_EQ(st["node02"]["state"], "READY");
    EXPECT_EQ(st["node03"]["state"], "DRIFTED");
    EXPECT_EQ(st["node03"]["reasons"][0], "drift.bios 2.0 (03/28/2024)");
    EXPECT_EQ(st["node04"]["state"], "DRAIN");
    EXPECT_EQ(st["node04"]["reasons"][0], "gpu.pcie-link");  // its own failed check first
    EXPECT_EQ(st["node05"]["state"], "UNKNOWN");
    EXPECT_NE(st["node05"]["reasons"][0].get<std::string>().find("unreadable"), std::string::npos);
    ASSERT_EQ(doc["drain"].size(), 1u);
    EXPECT_EQ(doc["drain"][0]["name"], "node04");
    // The text names the same.
    r = run_trainrig("fleet judge " + dir_.string());
    EXPECT_NE(r.out.find("FLEET: 2 READY, 1 to drain, 1 drifted, 1 unknown (5 nodes)"),
              std::string::npos)
        << r.out;
}

TEST_F(FleetCli, ReportDirectoriesOfDifferentMachinesAreShapeFindings) {
    const char* machines[] = {"hgx-8xh100", "hgx-8xh100", "hgx-8xh100", "epyc-4xa100-healthy"};
    for (int i = 0; i < 4; ++i) {
        const std::string m = machines[i];
        const fs::path out = dir_ / ("r" + std::to_string(i));
        run_trainrig("validate --root " + fixture(m) + " --report " + out.string(), nvml(m));
        ASSERT_TRUE(fs::exists(out / "report.json")) << m;
    }
    auto r = run_trainrig("fleet judge --json " + dir_.string());
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["nodes"].size(), 4u);
    bool gpus = false;
    for (const auto& f : doc["findings"])
        if (f["id"] == "shape.gpus") {
            gpus = true;
            EXPECT_EQ(f["nodes"], json::array({"a100-node01"})) << f;
        }
    EXPECT_TRUE(gpus) << doc["findings"].dump(1);
    EXPECT_EQ(states(doc)["a100-node01"]["state"], "DRAIN") << doc["nodes"].dump(1);
}

TEST_F(FleetCli, NothingToJudgeIsOneSentence) {
    auto r = run_trainrig("fleet judge " + dir_.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no report or snapshot"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainrig::test

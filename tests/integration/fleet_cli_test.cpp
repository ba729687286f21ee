// `trainrig fleet judge` as a user runs it: over snapshots (`collect`) and over validate report
// directories of fixture machine trees, with planted drift, a link at x8, a different machine
// and a truncated report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nvml(const std::string& machine) {
    return "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" +
           machine + ".json";
}

// Validates a fixture machine tree into `out` as if it were `host`, finished at `finished` (an
// ISO 8601 time, or "" for now): report.json rewritten and its line of SHA256SUMS with it, as
// validate on that host at that time would have written them.
void validate_as(const std::string& machine, const fs::path& out, const std::string& host,
                 const std::string& finished = "",
                 const std::function<void(json&)>& edit = nullptr) {
    run_trainrig("validate --root " + fixture(machine) + " --report " + out.string(),
                 nvml(machine));
    ASSERT_TRUE(fs::exists(out / "report.json")) << machine;
    json doc = json::parse(slurp(out / "report.json"));
    doc["host"] = host;
    if (!finished.empty()) doc["finished_at"] = finished;
    if (edit) edit(doc);
    const std::string text = doc.dump();
    std::ofstream(out / "report.json") << text;
    std::string sums = slurp(out / "SHA256SUMS");
    const size_t at = sums.find("  report.json\n");
    ASSERT_NE(at, std::string::npos) << sums;
    sums.replace(at - 64, 64, sha256_hex(text));
    std::ofstream(out / "SHA256SUMS") << sums;
}

class FleetCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("fleet-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    // node01..node04 from one collected snapshot (node03 another BIOS, node04 a GPU at x8) and
    // node05 cut in half, in dir_.
    void write_snapshots() {
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
    }
    std::map<std::string, json> states(const json& doc) {
        std::map<std::string, json> out;
        for (const auto& n : doc["nodes"]) out[n["name"]] = n;
        return out;
    }
    fs::path dir_;
};

TEST_F(FleetCli, SnapshotsWithDriftAnX8LinkAndATruncatedFile) {
    write_snapshots();
    auto r = run_trainrig("fleet judge --json " + dir_.string());
    EXPECT_EQ(r.rc, 2) << r.err;  // node05 could not be judged: that wins over a node to drain
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
        const fs::path out = dir_ / ("r" + std::to_string(i));
        validate_as(machines[i], out, i == 3 ? "a100-node01" : "hgx-node0" + std::to_string(i));
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

// Three reports of one host (last week's NOT READY, then two READY ones): one node, judged by
// the newest, the two older ones set aside and named.
TEST_F(FleetCli, SeveralReportsOfOneHostAreOneNode) {
    for (int i = 0; i < 3; ++i)  // a day apart, the first NOT READY
        validate_as("hgx-8xh100", dir_ / ("r" + std::to_string(i)), "node07",
                    "2026-12-0" + std::to_string(i + 1) + "T10:00:00Z", [i](json& doc) {
                        if (i == 0) doc["verdict"] = "NOT READY";
                    });
    auto r = run_trainrig("fleet judge --json " + dir_.string());
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["nodes"].size(), 1u) << r.out;
    EXPECT_EQ(doc["nodes"][0]["state"], "READY") << doc["nodes"][0];
    EXPECT_EQ(doc["nodes"][0]["source"], (dir_ / "r2" / "report.json").string());
    ASSERT_EQ(doc["set_aside"].size(), 2u);
    for (const auto& a : doc["set_aside"])
        EXPECT_EQ(a["kept"], (dir_ / "r2" / "report.json").string()) << a;
    r = run_trainrig("fleet judge " + dir_.string());
    EXPECT_NE(r.out.find("(1 node)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("set aside: node07 " + (dir_ / "r0" / "report.json").string()),
              std::string::npos)
        << r.out;
}

// A node drained in 3 of its last 4 reports is a lemon: drained although its newest report passed,
// with its history in the JSON and the lemon in the report; the window and the count are options.
TEST_F(FleetCli, ANodeThatKeepsFailingIsALemonUntilRepaired) {
    auto fail = [](const std::string& check) {
        return [check](json& doc) {
            doc["verdict"] = "NOT READY";
            doc["items"] = json::array({{{"id", check},
                                         {"stage", "doctor"},
                                         {"level", "fail"},
                                         {"summary", check + " failed"}}});
        };
    };
    validate_as("hgx-8xh100", dir_ / "a", "node07", "2026-11-20T10:00:00Z", fail("gpu.ecc"));
    validate_as("hgx-8xh100", dir_ / "b", "node07", "2026-11-27T10:00:00Z", fail("kmsg.xid"));
    validate_as("hgx-8xh100", dir_ / "c", "node07", "2026-12-03T10:00:00Z", fail("gpu.ecc"));
    validate_as("hgx-8xh100", dir_ / "d", "node07", "2026-12-06T10:00:00Z");
    for (int i = 1; i <= 3; ++i)
        validate_as("hgx-8xh100", dir_ / ("n" + std::to_string(i)), "node0" + std::to_string(i),
                    "2026-12-06T10:00:00Z");
    auto r =
        run_trainrig("fleet judge --json --out " + (dir_ / "out").string() + " " + dir_.string());
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    json doc = json::parse(r.out);
    const json node = states(doc)["node07"];
    EXPECT_EQ(node["state"], "DRAIN") << node;
    EXPECT_EQ(node["own_verdict"], "READY");
    EXPECT_EQ(node["reasons"][0],
              "lemon gpu.ecc: drained in 3 of its last 4 reports within 30 days");
    EXPECT_EQ(node["lemon"]["drains"], 3);
    EXPECT_EQ(node["lemon"]["check"], "gpu.ecc");
    ASSERT_EQ(node["history"].size(), 4u);
    EXPECT_EQ(node["history"][0]["written_at"], "2026-12-06T10:00:00Z");
    EXPECT_EQ(node["history"][1]["failed"], json::array({"gpu.ecc"}));
    EXPECT_EQ(
        doc["drain"][0]["scheduler_reason"].get<std::string>().rfind("trainrig:lemon gpu.ecc", 0),
        0u)
        << doc["drain"];
    EXPECT_EQ(states(doc)["node01"]["lemon"], nullptr);
    EXPECT_NE(slurp(dir_ / "out" / "fleet-report.md").find("lemon"), std::string::npos);
    EXPECT_NE(slurp(dir_ / "out" / "fleet-report.html").find("2026-11-27T10:00:00Z kmsg.xid"),
              std::string::npos);
    // Looking back 5 days, two drains: not a lemon, and its newest report says READY.
    fs::remove_all(dir_ / "out");
    r = run_trainrig("fleet judge --json --lemon-days 5 " + dir_.string());
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(states(json::parse(r.out))["node07"]["state"], "READY");
    r = run_trainrig("fleet judge --json --lemon-drains 4 " + dir_.string());
    EXPECT_EQ(states(json::parse(r.out))["node07"]["state"], "READY");
}

// A report edited after validate wrote it (a NOT READY turned READY by hand) is not judged: the
// node is UNKNOWN, "report changed since written", and `trainrig report` says so too.
TEST_F(FleetCli, AChangedReportIsUnknownNeverReady) {
    const std::string m = "article-box";
    const fs::path out = dir_ / "r";
    run_trainrig("validate --root " + fixture(m) + " --report " + out.string(), nvml(m));
    json doc = json::parse(slurp(out / "report.json"));
    ASSERT_EQ(doc["verdict"], "NOT READY");
    doc["verdict"] = "READY";
    doc["items"] = json::array();
    std::ofstream(out / "report.json") << doc.dump();
    auto r = run_trainrig("fleet judge --json " + dir_.string());
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    const json judged = json::parse(r.out);
    ASSERT_EQ(judged["nodes"].size(), 1u);
    EXPECT_EQ(judged["nodes"][0]["state"], "UNKNOWN");
    EXPECT_NE(judged["nodes"][0]["reasons"][0].get<std::string>().find(
                  "report changed since written: report.json changed"),
              std::string::npos)
        << judged["nodes"][0];
    r = run_trainrig("report " + out.string());
    EXPECT_NE(r.err.find("report changed since written: report.json changed"), std::string::npos)
        << r.err;
}

// A pairs file: node02 slow with each of its partners, every other pair at full speed.
std::string pairs_file(const fs::path& path, const std::string& odd_node = "node01") {
    json pairs = json::array();
    for (const auto& [a, b] :
         std::vector<std::pair<std::string, std::string>>{{odd_node, "node03"},
                                                          {"node01", "node04"},
                                                          {"node03", "node04"},
                                                          {"node01", "node05"},
                                                          {"node03", "node05"},
                                                          {"node04", "node05"}})
        pairs.push_back({{"nodes", {a, b}}, {"value", 4.0e10}});
    for (const char* partner : {"node01", "node03", "node04"})
        pairs.push_back({{"nodes", {"node02", partner}}, {"value", 1.0e10}});
    std::ofstream(path) << json{
        {"schema", "trainrig.fleet.pairs"},
        {"schema_version", 1},
        {"measurement", "nccl all-reduce busbw"},
        {"pairs", pairs}}.dump();
    return path.string();
}

TEST_F(FleetCli, OutWritesTheFleetReportBesideWhatTheFolderHolds) {
    write_snapshots();
    const fs::path out = dir_.string() + "-report";
    fs::create_directories(out);
    std::ofstream(out / "notes.txt") << "the operator's notes";
    const std::string pairs = pairs_file(dir_.string() + "-pairs.json");
    auto r = run_trainrig("fleet judge --json " + dir_.string() + " --pairs " + pairs + " --out " +
                          out.string());
    EXPECT_EQ(r.rc, 2) << r.err;
    for (const char* f : {"fleet-report.json", "fleet-report.md", "fleet-report.html"})
        EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
    EXPECT_EQ(slurp(out / "notes.txt"), "the operator's notes");
    // The file is what --json prints: the trainrig.fleet document in the command envelope.
    EXPECT_EQ(slurp(out / "fleet-report.json"), r.out);
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.fleet");
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc["command"], "fleet judge");
    EXPECT_EQ(doc["exit_code"], r.rc);
    EXPECT_TRUE(doc["trainrig_version"].is_string());
    size_t counted = 0;
    for (const auto& [state, n] : doc["counts"].items()) counted += n.get<size_t>();
    EXPECT_EQ(counted, doc["nodes"].size());
    auto st = states(doc);
    EXPECT_EQ(st["node02"]["state"], "DRAIN");
    EXPECT_EQ(st["node02"]["reasons"][0],
              "pair.nccl.all-reduce.busbw slow with all 3 partners, 3 known good");
    EXPECT_EQ(doc["pairs"]["bad"], json::array({"node02"}));
    std::map<std::string, std::string> drain;
    for (const auto& d : doc["drain"]) drain[d["name"]] = d["scheduler_reason"];
    EXPECT_EQ(drain, (std::map<std::string, std::string>{
                         {"node02",
                          "trainrig:pair.nccl.all-reduce.busbw slow with all 3 partners, "
                          "3 known good"},
                         {"node04", "trainrig:gpu.pcie-link"}}));
    const std::string html = slurp(out / "fleet-report.html");
    for (const char* name : {"node01", "node02", "node03", "node04", "node05"})
        EXPECT_NE(html.find(name), std::string::npos) << name;
    EXPECT_NE(slurp(out / "fleet-report.md").find("| `node04` | `trainrig:gpu.pcie-link` |"),
              std::string::npos);
    // Judged again into the same folder, the three files are replaced and nothing else moves.
    r = run_trainrig("fleet judge " + dir_.string() + " --out " + out.string());
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.out.find("report: " + (out / "fleet-report.html").string()), std::string::npos);
    EXPECT_FALSE(json::parse(slurp(out / "fleet-report.json")).contains("pairs"));
    EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 4);
    fs::remove_all(out);
    fs::remove(pairs);
}

TEST_F(FleetCli, AFailedWriteLeavesNoHalfReport) {
    write_snapshots();
    // Files larger than 4 KiB cannot be written (EFBIG, the signal ignored): the HTML page fails.
    auto judge_limited = [&](const fs::path& out) {
        return run_sh("sh -c \"trap '' XFSZ; ulimit -f 8; exec " + std::string(TRAINRIG_BINARY) +
                      " fleet judge " + dir_.string() + " --out " + out.string() + "\"");
    };
    const fs::path fresh = dir_ / "fresh";
    auto r = judge_limited(fresh);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.err.find("no report was written"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(fresh));
    const fs::path kept = dir_ / "kept";
    fs::create_directories(kept);
    std::ofstream(kept / "fleet-report.json") << "last week's";
    std::ofstream(kept / "notes.txt") << "notes";
    r = judge_limited(kept);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_EQ(slurp(kept / "fleet-report.json"), "last week's");
    EXPECT_EQ(slurp(kept / "notes.txt"), "notes");
    EXPECT_FALSE(fs::exists(kept / "fleet-report.html"));
    for (const fs::path& d : {dir_, kept})  // no temporary directory left anywhere
        for (const auto& e : fs::directory_iterator(d))
            EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST_F(FleetCli, APairsFileNamingAnotherNodeIsRefused) {
    write_snapshots();
    const std::string pairs = pairs_file(dir_.string() + "-pairs.json", "node77");
    auto r = run_trainrig("fleet judge " + dir_.string() + " --pairs " + pairs);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("names node77, which is not among the nodes judged"), std::string::npos)
        << r.err;
    fs::remove(pairs);
}

TEST_F(FleetCli, NothingToJudgeIsOneSentence) {
    auto r = run_trainrig("fleet judge " + dir_.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no report or snapshot"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainrig::test

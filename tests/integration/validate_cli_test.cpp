// `trainrig validate` end to end: on machine trees with planted GPU faults (fake NVML), where the
// verdict comes from the configuration checks, and once live on this machine, where the
// benchmarks and the training run take part. Each checks the verdict, the exit code, the item
// ids and the report directory (SHA256SUMS, `trainrig report verify`).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "doctor_json.h"
#include "hanging_python.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

struct Fault {
    std::string name;
    std::function<void(json& gpu)> plant;  // on GPU 0's NVML answers
    std::string verdict;
    int rc;
    std::string item;  // an item the verdict must name ("" for none)
};

void PrintTo(const Fault& f, std::ostream* os) { *os << f.name; }

const char* kMachine = "epyc-4xa100-healthy";

class ValidateTree : public ::testing::TestWithParam<Fault> {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("validate-" + GetParam().name + "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        auto model = json::parse(
            slurp(std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + kMachine + ".json"));
        GetParam().plant(model["gpus"][0]);
        std::ofstream(dir_ / "nvml.json") << model.dump(1);
        env_ = "TRAINRIG_FAKE_NVML=" + (dir_ / "nvml.json").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
    std::string env_;
};

TEST_P(ValidateTree, VerdictExitCodeItemsAndReport) {
    const auto& f = GetParam();
    const fs::path report = dir_ / "report";
    auto r = run_trainrig(
        "validate --json --root " + fixture(kMachine) + " --report " + report.string(), env_);
    ASSERT_EQ(r.rc, f.rc) << r.err << r.out.substr(0, 3000);
    const auto doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "trainrig.validate");
    EXPECT_EQ(doc["exit_code"], f.rc);
    EXPECT_EQ(doc["verdict"], f.verdict) << doc["verdict_line"];
    EXPECT_EQ(doc["scope"], "tree");
    EXPECT_NE(doc["verdict_line"].get<std::string>().find("machine tree: configuration only"),
              std::string::npos);
    bool named = f.item.empty();
    for (const auto& i : doc["items"]) {
        named = named || i["id"] == f.item;
        EXPECT_FALSE(i["action"].get<std::string>().empty()) << i.dump();
    }
    EXPECT_TRUE(named) << f.item << " not among " << doc["items"].dump(1);
    // The stages that need the live machine say so; none counts as could not run.
    for (const auto& s : doc["stages"]) {
        if (s["name"] == "doctor" || s["name"] == "topology") {
            EXPECT_EQ(s["state"], "ran") << s.dump();
        } else {
            EXPECT_EQ(s["state"], "skipped") << s.dump();
            EXPECT_NE(s["reason"].get<std::string>().find("machine tree"), std::string::npos);
        }
    }
    // The report: the same document, a Markdown page, and sums that check.
    EXPECT_EQ(json::parse(slurp((report / "report.json").string()))["verdict"], f.verdict);
    EXPECT_NE(slurp((report / "report.md").string()).find(doc["verdict_line"].get<std::string>()),
              std::string::npos);
    EXPECT_TRUE(fs::exists(report / "raw/snapshot.json"));
    EXPECT_NE(slurp((report / "report.html").string()).find("id=\"verdict\""), std::string::npos);
    auto v = run_trainrig("report verify " + report.string());
    EXPECT_EQ(v.rc, 0) << v.out << v.err;
    std::ofstream(report / "report.md", std::ios::app) << "edited\n";
    v = run_trainrig("report verify --json " + report.string());
    EXPECT_EQ(v.rc, 1) << v.out;
    EXPECT_EQ(json::parse(v.out)["changed"], json::array({"report.md"}));
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ValidateTree,
    ::testing::Values(
        Fault{"healthy", [](json&) {}, "READY", 0, ""},
        Fault{"at_slowdown_temperature", [](json& g) { g["temperature"] = 89; }, "NOT READY", 1,
              "gpu.temperature"},
        Fault{"thermal_slowdown",
              [](json& g) {
                  g["clock_event_reasons"] = 0x40;
                  g["utilization"]["gpu"] = 100;
              },
              "NOT READY", 1, "gpu.clock-events"},
        Fault{"row_remap_pending", [](json& g) { g["remapped_rows"]["pending"] = true; },
              "NOT READY", 1, "gpu.remapped-rows"},
        Fault{"lost_gpu", [](json& g) { g["lost"] = true; }, "NOT READY", 1, "gpu.count"},
        Fault{"x8_link", [](json& g) { g["pcie"]["width"] = 8; }, "NOT READY", 1, "gpu.pcie-link"}),
    [](const auto& param_info) { return param_info.param.name; });

// A driver call that never returns: doctor's GPU checks could not read their input, which is
// never a pass. The machine tree is otherwise healthy, so the verdict is UNKNOWN, exit 2.
TEST(ValidateCli, AHungDriverCallIsUnknownNeverReady) {
    const fs::path dir =
        fs::temp_directory_path() / ("validate-hang-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto r = run_trainrig(
        "validate --json --timeout 1 --root " + fixture("cpu-only") + " --report " + dir.string(),
        fake_nvml("faults/hang"));
    EXPECT_EQ(r.rc, 2) << r.err << r.out.substr(0, 2000);
    const auto doc = json::parse(r.out);
    EXPECT_EQ(doc["verdict"], "UNKNOWN") << doc["verdict_line"];
    bool temperature = false;
    for (const auto& i : doc["items"])
        temperature = temperature || (i["id"] == "gpu.temperature" && i["level"] == "unknown");
    EXPECT_TRUE(temperature) << doc["items"].dump(1);
    EXPECT_EQ(run_trainrig("report verify " + dir.string()).rc, 0);
    fs::remove_all(dir);
}

TEST(ValidateCli, MistakesAreOneSentenceAndWriteNothing) {
    const fs::path dir = fs::temp_directory_path() / ("validate-bad-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto r = run_trainrig("validate --skip gpu-benchmarks --report " + dir.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--skip gpu-benchmarks: neither a stage"), std::string::npos) << r.err;
    r = run_trainrig("validate --level thorough");
    EXPECT_EQ(r.rc, 2);
    r = run_trainrig("validate --root /nonexistent-tree --report " + dir.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_FALSE(fs::exists(dir));
    // An existing report directory is refused, its files untouched.
    fs::create_directories(dir);
    std::ofstream(dir / "mine") << "keep";
    r = run_trainrig("validate --root " + fixture("cpu-only") + " --report " + dir.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("exists already"), std::string::npos) << r.err;
    EXPECT_EQ(slurp((dir / "mine").string()), "keep");
    fs::remove_all(dir);
}

// Ctrl-C while doctor waits for the PyTorch probe: exit 130, and the report is still written,
// marked incomplete, with the verdict UNKNOWN at best.
TEST(ValidateCli, InterruptedRunWritesAnIncompleteReport) {
    const fs::path dir = fs::temp_directory_path() / ("validate-int-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    HangingPythonRun run(dir, {TRAINRIG_BINARY, "validate", "--timeout", "30", "--report",
                               (dir / "report").string()});
    ASSERT_TRUE(run.process().started());
    ASSERT_TRUE(run.probe_started()) << "the probe never started: " << run.err();
    EXPECT_EQ(run.process().stop(SIGINT, 10), 128 + SIGINT) << run.err();
    const auto doc = json::parse(slurp(dir / "report/report.json"));
    EXPECT_EQ(doc["incomplete"], true);
    EXPECT_EQ(doc["verdict_line"].get<std::string>().rfind("INCOMPLETE", 0), 0u)
        << doc["verdict_line"];
    EXPECT_NE(doc["verdict"], "READY");
    EXPECT_EQ(doc["stages"][0]["state"], "interrupted");
    EXPECT_EQ(run_trainrig("report verify " + (dir / "report").string()).rc, 0);
    fs::remove_all(dir);
}

// The live machine (no GPU here): doctor, topology, host benchmarks and a CPU training run that
// must learn; no GPU stages, and a verdict that says it covers the host only.
TEST(ValidateLive, QuickOnThisMachine) {
    const fs::path dir =
        fs::temp_directory_path() / ("validate-live-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto r = run_trainrig("validate --json --report " + dir.string());
    ASSERT_NE(r.rc, 2) << r.err << r.out.substr(0, 3000);
    const auto doc = json::parse(r.out);
    std::map<std::string, std::string> state;
    for (const auto& s : doc["stages"]) state[s["name"]] = s["state"];
    EXPECT_EQ(state["doctor"], "ran");
    EXPECT_EQ(state["host-bench"], "ran");
    EXPECT_EQ(state["training"], "ran");
    bool learned = false;
    for (const auto& rec : doc["bench"]["results"])
        if (rec["bench"] == "train" && rec["name"] == "tokens") learned = rec["verified"] == true;
    EXPECT_TRUE(learned) << doc["bench"].dump(1).substr(0, 3000);
    if (doc["scope"] == "host") {
        EXPECT_EQ(state["gpu-bench"], "skipped");
        EXPECT_NE(doc["verdict_line"].get<std::string>().find("no GPU: host checks only"),
                  std::string::npos);
    }
    EXPECT_EQ(doc["exit_code"], r.rc);
    EXPECT_EQ(run_trainrig("report verify " + dir.string()).rc, 0);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace trainrig::test

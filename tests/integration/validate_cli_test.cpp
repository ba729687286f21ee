// `trainrig validate` end to end: on machine trees with planted GPU faults (fake NVML), where the
// verdict comes from the configuration checks, and once live on this machine, where the
// benchmarks and the training run take part. Each checks the verdict, the exit code, the item
// ids and the report directory (SHA256SUMS, `trainrig report verify`).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

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

// report.json against docs/schema/trainrig.validate-2.schema.json; the violations, or "".
// The python3 on PATH first; Debian's, where python3-jsonschema installs, when it lacks the
// package (exit 3: a pyenv or venv interpreter).
std::string schema_violations(const fs::path& report_json) {
    const std::string src = TRAINRIG_SOURCE_DIR;
    const std::string args = " " + src + "/tests/scripts/check_json_schema.py " + src +
                             "/docs/schema/trainrig.validate-2.schema.json " + report_json.string();
    auto r = run_sh("python3" + args);
    if (r.rc == 3) r = run_sh("/usr/bin/python3" + args);
    return r.rc == 0 ? "" : "rc " + std::to_string(r.rc) + ": " + r.out + r.err;
}

// A report of the healthy machine tree, to compare the faulty ones with (`report diff`).
const fs::path& healthy_report() {
    static const fs::path dir = [] {
        const fs::path d =
            fs::temp_directory_path() / ("validate-reference-" + std::to_string(::getpid()));
        fs::remove_all(d);
        run_trainrig("validate --root " + fixture(kMachine) + " --report " + d.string(),
                     "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) +
                         "/tests/fixtures/nvml/" + kMachine + ".json");
        std::atexit([] {
            fs::remove_all(fs::temp_directory_path() /
                           ("validate-reference-" + std::to_string(::getpid())));
        });
        return d;
    }();
    return dir;
}

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
    EXPECT_EQ(schema_violations(report / "report.json"), "");
    // Rendered again from report.json alone, the page and the Markdown are the ones written.
    EXPECT_EQ(run_trainrig("report --md " + report.string()).out,
              slurp((report / "report.md").string()));
    EXPECT_EQ(run_trainrig("report --html " + report.string()).out,
              slurp((report / "report.html").string()));
    // Against the healthy machine: the fault appeared, and the diff exits 1 (worse).
    auto d =
        run_trainrig("report diff --json " + healthy_report().string() + " " + report.string());
    EXPECT_EQ(d.rc, f.item.empty() ? 0 : 1) << d.out << d.err;
    const auto diff = json::parse(d.out);
    bool appeared = f.item.empty();
    for (const auto& i : diff["appeared"]) appeared = appeared || i["id"] == f.item;
    EXPECT_TRUE(appeared) << diff.dump(1);
    EXPECT_EQ(diff["new_verdict"], f.verdict);
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

// Coverage (docs/report.md): what the class requires and was not judged keeps the verdict from a
// plain READY and is named everywhere the verdict is: the line, the JSON, the terminal, the
// Markdown and HTML pages, and fleet judge.
TEST(ValidateCli, ARequiredCheckSkippedIsNeverAPlainReady) {
    const std::string env = "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) +
                            "/tests/fixtures/nvml/" + kMachine + ".json";
    const auto healthy = json::parse(slurp((healthy_report() / "report.json").string()));
    const auto& whole = healthy["coverage"];
    EXPECT_TRUE(whole["complete"].get<bool>()) << whole["missing"];
    EXPECT_EQ(whole["class"]["label"], "4x A100-SXM4-80GB, --level quick, machine tree");
    EXPECT_EQ(whole["judged"], whole["required"]);

    const fs::path dir =
        fs::temp_directory_path() / ("validate-coverage-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto r = run_trainrig(
        "validate --root " + fixture(kMachine) + " --skip gpu.nvlink,kmsg --report " + dir.string(),
        env);
    EXPECT_EQ(r.rc, 0) << r.err << r.out;
    EXPECT_NE(
        r.out.find("READY WITH WARNINGS: 3 of " + std::to_string(whole["required"].get<int>()) +
                   " required checks not judged: gpu.nvlink, kmsg.xid, kmsg.pcie-aer"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("not judged: gpu.nvlink (skipped)"), std::string::npos) << r.out;
    const auto doc = json::parse(slurp((dir / "report.json").string()));
    EXPECT_EQ(doc["schema_version"], 2);
    EXPECT_EQ(doc["verdict"], "READY WITH WARNINGS");
    EXPECT_EQ(doc["items"], json::array());  // nothing found: it is what was not looked at
    EXPECT_EQ(doc["coverage"]["missing"], json::array({"gpu.nvlink", "kmsg.xid", "kmsg.pcie-aer"}));
    EXPECT_EQ(schema_violations(dir / "report.json"), "");
    const std::string md = slurp((dir / "report.md").string());
    EXPECT_NE(md.find("## Coverage"), std::string::npos);
    EXPECT_NE(md.find("| `gpu.nvlink` | doctor | **skipped** | board-wired NVLink (SXM) |"),
              std::string::npos)
        << md;
    EXPECT_NE(slurp((dir / "report.html").string()).find("id=\"coverage\""), std::string::npos);

    // fleet judge names it, and drains nothing for it.
    auto f = run_trainrig("fleet judge --json " + dir.string());
    EXPECT_EQ(f.rc, 0) << f.out << f.err;
    const auto fleet = json::parse(f.out);
    EXPECT_EQ(fleet["nodes"][0]["coverage"]["missing"], doc["coverage"]["missing"]);
    ASSERT_EQ(fleet["findings"].size(), 1u) << fleet["findings"];
    EXPECT_EQ(fleet["findings"][0]["id"], "coverage");

    // A report of schema 1 (before coverage) is still read: rendered, compared, judged.
    auto old = healthy;
    old["schema_version"] = 1;
    old.erase("coverage");
    const fs::path v1 = dir.string() + "-v1.json";
    std::ofstream(v1) << old.dump();
    auto md1 = run_trainrig("report --md " + v1.string());
    EXPECT_EQ(md1.rc, 0) << md1.err;
    EXPECT_EQ(md1.out.find("## Coverage"), std::string::npos);
    // Against it, the skipped run is worse: READY then, READY WITH WARNINGS now.
    auto d = run_trainrig("report diff --json " + v1.string() + " " + dir.string());
    EXPECT_EQ(d.rc, 1) << d.out << d.err;
    EXPECT_EQ(json::parse(d.out)["verdict_change"], "worse");
    const auto judged_v1 = json::parse(run_trainrig("fleet judge --json " + v1.string()).out);
    EXPECT_TRUE(judged_v1["nodes"][0]["coverage"].is_null());
    EXPECT_NE(judged_v1["nodes"][0]["warnings"].dump().find("schema 1"), std::string::npos);
    fs::remove(v1);
    fs::remove_all(dir);
}

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
    EXPECT_EQ(schema_violations(dir / "report.json"), "");
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

// The report's versions name the machine, its BIOS and its adapters' firmware (the tree's DMI
// and InfiniBand sysfs files), for a reader and for `fleet` to compare.
TEST(ValidateCli, VersionsNameTheSystemBiosAndNicFirmware) {
    auto r = run_trainrig("validate --json --no-report --root " + fixture("hgx-8xh100"),
                          "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) +
                              "/tests/fixtures/nvml/hgx-8xh100.json");
    const auto v = json::parse(r.out)["versions"];
    EXPECT_EQ(v["system"], "Supermicro SYS-821GE-TNHR") << v;
    EXPECT_EQ(v["bios"], "2.1 (03/28/2024)") << v;
    EXPECT_EQ(v["gpu_vbios"], "96.00.99.00.01 (8 GPUs)") << v;
    EXPECT_NE(v["nic_firmware"].get<std::string>().find("mlx5_0 28.39.1002"), std::string::npos)
        << v;
    EXPECT_FALSE(v.contains("torch")) << v;  // the stack is not probed in a tree
    const auto cpu = json::parse(
        run_trainrig("validate --json --no-report --root " + fixture("cpu-only")).out)["versions"];
    EXPECT_EQ(cpu["system"], "QEMU Standard PC (i440FX + PIIX, 1996)") << cpu;
    EXPECT_FALSE(cpu.contains("nic_firmware")) << cpu;  // virtio-net: no InfiniBand device
}

// A disk that fills while the report is written (a file-size limit of 20 KiB: writing past it
// fails with EFBIG as a full disk fails with ENOSPC; the tree's report.json is larger): one
// error sentence, and no report directory, whole or half, nor its temporary one.
TEST(ValidateCli, AFullDiskLeavesNoHalfWrittenReport) {
    const fs::path parent =
        fs::temp_directory_path() / ("validate-full-" + std::to_string(::getpid()));
    fs::remove_all(parent);
    fs::create_directories(parent);
    auto r =
        run_sh("TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" +
               kMachine + ".json sh -c \"trap '' XFSZ; ulimit -f 40; exec " + TRAINRIG_BINARY +
               " validate --root " + fixture(kMachine) + " --report " +
               (parent / "report").string() + "\"");
    EXPECT_EQ(r.rc, 2) << r.out.substr(0, 500) << r.err;
    EXPECT_NE(r.err.find("no report was written"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(parent)) << fs::directory_iterator(parent)->path();
    fs::remove_all(parent);
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
    EXPECT_EQ(schema_violations(dir / "report/report.json"), "");
    fs::remove_all(dir);
}

// Stages that do not finish (a fake GPU plugin for 8 fake-NVML GPUs): one that stops when asked
// is stopped at --stage-timeout; one stuck in its call is killed a grace period later; one that
// crashes is named. Each way the verdict is UNKNOWN naming the stage, never READY, and the report
// is written. (The stack rules are skipped: this machine's CUDA is newer than the fake driver.)
// Runs validate with the fake plugin in `mode` and a stage limit of a few seconds (room for a
// sanitizer build's child to start): it must end UNKNOWN, well within the stage's own budget.
// Returns the report document and its stages by name.
struct StuckRun {
    json doc;
    std::map<std::string, json> stages;
};

StuckRun validate_stuck(const char* mode, int stage_timeout, const std::string& args) {
    const std::string env = std::string("TRAINRIG_FAKE_NVML=") + TRAINRIG_SOURCE_DIR +
                            "/tests/fixtures/nvml/hgx-8xh100.json TRAINRIG_GPU_BENCH_PLUGIN=" +
                            TRAINRIG_FAKE_GPU_BENCH_LIB + " FAKE_GPU_BENCH=" + mode +
                            // A sanitizer build would report the crash and exit 1 itself.
                            " ASAN_OPTIONS=handle_segv=0";
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_trainrig(
        "validate --json --stage-timeout " + std::to_string(stage_timeout) + " " + args, env);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    StuckRun out;
    EXPECT_EQ(r.rc, 2) << r.err << r.out.substr(0, 3000);
    EXPECT_LT(took, 30);
    out.doc = json::parse(r.out);
    EXPECT_EQ(out.doc["verdict"], "UNKNOWN");
    for (const auto& s : out.doc["stages"]) out.stages[s["name"]] = s;
    return out;
}

TEST(ValidateWatchdog, ASlowStageIsStoppedAtItsLimit) {
    auto run = validate_stuck("slow", 3, "--no-report --skip training,host-bench,data-path,stack");
    const json& s = run.stages["gpu-bench"];
    EXPECT_EQ(s["state"], "could not run");
    EXPECT_NE(s["reason"].get<std::string>().find("stopped: it ran past 3 s"), std::string::npos)
        << s;
    bool named = false;
    for (const auto& i : run.doc["items"])
        named = named || (i["id"] == "stage.gpu-bench" && i["level"] == "unknown");
    EXPECT_TRUE(named) << run.doc["items"].dump(1);
}

TEST(ValidateWatchdog, ACrashedStageIsNamedAndTheRunGoesOn) {
    auto run = validate_stuck("crash", 60, "--no-report --skip host-bench,training,stack");
    const json& s = run.stages["gpu-bench"];
    EXPECT_EQ(s["state"], "could not run");
    EXPECT_NE(s["reason"].get<std::string>().find("crashed: SIGSEGV"), std::string::npos) << s;
    EXPECT_EQ(run.stages["data-path"]["state"], "ran") << run.stages["data-path"];
    bool named = false;
    for (const auto& i : run.doc["items"])
        named = named || (i["id"] == "stage.gpu-bench" && i["level"] == "unknown");
    EXPECT_TRUE(named) << run.doc["items"].dump(1);
}

TEST(ValidateWatchdog, AStageStuckInACallIsKilledAndTheReportWritten) {
    const fs::path dir =
        fs::temp_directory_path() / ("validate-hung-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto run = validate_stuck("hang", 3, "--skip host-bench,stack --report " + dir.string());
    EXPECT_NE(run.stages["gpu-bench"]["reason"].get<std::string>().find("hung"), std::string::npos)
        << run.stages["gpu-bench"];
    // Nothing else runs on a machine whose GPU call hung.
    EXPECT_NE(run.stages["training"]["reason"].get<std::string>().find("gpu-bench stage hung"),
              std::string::npos)
        << run.stages["training"];
    EXPECT_NE(run.doc["verdict_line"].get<std::string>().find("did not run: gpu-bench"),
              std::string::npos)
        << run.doc["verdict_line"];
    EXPECT_EQ(run_trainrig("report verify " + dir.string()).rc, 0);
    EXPECT_EQ(schema_violations(dir / "report.json"), "");
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
    EXPECT_EQ(schema_violations(dir / "report.json"), "");

    // --baseline: a report whose measurements were ten times today's (a second run faster than
    // the first, on a machine busy with other tests, still falls short). Each one this run
    // repeats is judged against its median with bench's tolerance: a tenth of it fails.
    auto faster = json::parse(slurp(dir / "report.json"));
    for (auto& rec : faster["bench"]["results"]) {
        for (auto& x : rec["samples"]) x = x.get<double>() * 10;
        rec["median"] = rec["median"].get<double>() * 10;
    }
    const fs::path golden = dir.string() + "-golden.json";
    std::ofstream(golden) << faster.dump();
    r = run_trainrig("validate --json --no-report --baseline " + golden.string());
    EXPECT_EQ(r.rc, 1) << r.err << r.out.substr(0, 2000);
    const auto judged = json::parse(r.out);
    EXPECT_GE(judged["baseline"]["matched"].get<int>(), 3) << judged["baseline"];
    bool tokens = false;
    for (const auto& i : judged["items"])
        if (i["id"] == "bench.train.tokens") {
            tokens = true;
            EXPECT_EQ(i["level"], "fail");
            EXPECT_NE(i["source"].get<std::string>().find(golden.string()), std::string::npos);
        }
    EXPECT_TRUE(tokens) << judged["items"].dump(1);
    // A step time below the baseline's is no shortfall: no item for it.
    for (const auto& i : judged["items"]) EXPECT_NE(i["id"], "bench.train.step-time");
    // And the diff of the two reports names the slower measurements.
    auto d = run_trainrig("report diff --json " + golden.string() + " " + dir.string());
    EXPECT_EQ(d.rc, 1) << d.out << d.err;
    EXPECT_FALSE(json::parse(d.out)["slower"].empty()) << d.out;
    fs::remove(golden);
    fs::remove_all(dir);
}

// Ctrl-C at every point of the training stage (TRAINRIG_TRAIN_CTRL_C_AT: before the first of
// quick's 4 steps, after each, and once the run is done but not yet reported): the report is
// incomplete and UNKNOWN, nothing measured is judged, and neither the Slurm health check, the
// node-problem-detector plugin nor fleet judge acts on it.
TEST(ValidateLive, CtrlCAnywhereInTheTrainingStageIsNeverAReasonToAct) {
    const fs::path dir =
        fs::temp_directory_path() / ("validate-ctrlc-" + std::to_string(::getpid()));
    for (int step = 0; step <= 4; ++step) {
        SCOPED_TRACE("Ctrl-C after step " + std::to_string(step));
        fs::remove_all(dir);
        auto r = run_trainrig(
            "validate --level quick --skip topology,host-bench,data-path,watch "
            "--report " +
                dir.string(),
            "TRAINRIG_TRAIN_CTRL_C_AT=" + std::to_string(step));
        ASSERT_EQ(r.rc, 128 + SIGINT) << r.out << r.err;
        if (step == 0) {  // each stage numbered by its place among all eight
            auto verbose = run_trainrig(
                "validate -v --no-report --level quick --skip topology,host-bench,data-path,watch");
            EXPECT_NE(verbose.err.find("validate: [6/8] a training run"), std::string::npos)
                << verbose.err;
        }
        const auto doc = json::parse(slurp(dir / "report.json"));
        EXPECT_EQ(doc["incomplete"], true);
        EXPECT_EQ(doc["verdict"], "UNKNOWN") << doc["verdict_line"];
        EXPECT_EQ(doc["verdict_line"].get<std::string>().rfind("INCOMPLETE, UNKNOWN", 0), 0u)
            << doc["verdict_line"];
        for (const auto& s : doc["stages"]) {
            if (s["name"] == "training") {
                EXPECT_EQ(s["state"], "interrupted") << s;
            }
        }
        for (const auto& i : doc["items"]) EXPECT_NE(i["stage"], "training") << i;
        for (const auto& rec : doc["bench"]["results"]) {
            EXPECT_EQ(rec["partial"], true) << rec;
            EXPECT_EQ(rec["status"], "incomplete") << rec;
        }
        EXPECT_EQ(schema_violations(dir / "report.json"), "");

        auto slurm = run_trainrig("slurm healthcheck --dry-run --node " + std::string("node07") +
                                  " --report " + dir.string());
        EXPECT_EQ(slurm.out.find("bench.train"), std::string::npos) << slurm.out;
        EXPECT_EQ(slurm.err.find("bench.train"), std::string::npos) << slurm.err;
        auto npd = run_trainrig("npd --report " + dir.string());
        EXPECT_EQ(npd.out.find("bench.train"), std::string::npos) << npd.out;
        auto fleet = run_trainrig("fleet judge --json " + dir.string());
        EXPECT_NE(fleet.rc, 1) << fleet.out << fleet.err;
        const auto judged = json::parse(fleet.out);
        ASSERT_EQ(judged["nodes"].size(), 1u) << fleet.out;
        EXPECT_EQ(judged["nodes"][0]["state"], "UNKNOWN") << judged["nodes"][0];
    }
    fs::remove_all(dir);
}

// Without --shards the loader reads tokens generated for it in the temp directory (or
// --data-dir), removed when the stage ends: nothing is left behind.
TEST(ValidateCli, TheDataPathOnGeneratedTokensLeavesNothingBehind) {
    const fs::path tmp = fs::temp_directory_path() / ("validate-tmp-" + std::to_string(::getpid()));
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    auto r = run_trainrig("validate --json --no-report --skip host-bench,training,watch",
                          "TMPDIR=" + tmp.string());
    const auto doc = json::parse(r.out);
    for (const auto& s : doc["stages"])
        if (s["name"] == "data-path") {
            EXPECT_EQ(s["state"], "ran") << s;
        }
    bool loaded = false;
    for (const auto& rec : doc["bench"]["results"])
        if (rec["bench"] == "loader" && rec["name"] == "tokens") {
            loaded = true;
            EXPECT_EQ(rec["params"]["corpus_tokens"], 4u << 20);  // quick: 8 MiB of uint16
            EXPECT_EQ(rec["status"], "info");                     // no hardware figure to expect
        }
    EXPECT_TRUE(loaded) << doc["bench"].dump(1).substr(0, 3000);
    EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
    fs::remove_all(tmp);
}

// The schema holds the report to its contract: a verdict missing or an item's level unknown
// is refused, so a report that passes it is one the renderers and `report diff` can read.
TEST(ValidateCli, TheSchemaRefusesABrokenReport) {
    const fs::path dir = fs::temp_directory_path() / ("validate-sch-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ASSERT_NE(
        run_trainrig("validate --root " + fixture("article-box") + " --report " + dir.string()).rc,
        2);
    ASSERT_EQ(schema_violations(dir / "report.json"), "");
    auto doc = json::parse(slurp(dir / "report.json"));
    ASSERT_FALSE(doc["items"].empty());
    doc.erase("verdict");
    doc["items"][0]["level"] = "bad";
    std::ofstream(dir / "broken.json") << doc.dump();
    const auto v = schema_violations(dir / "broken.json");
    EXPECT_NE(v.find("verdict"), std::string::npos) << v;
    EXPECT_NE(v.find("items/0/level"), std::string::npos) << v;
    fs::remove_all(dir);
}

TEST(ValidateCli, ABaselineWithoutMeasurementsIsRefused) {
    const fs::path dir = fs::temp_directory_path() / ("validate-bl-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ASSERT_NE(
        run_trainrig("validate --root " + fixture("cpu-only") + " --report " + dir.string()).rc, 2);
    auto r = run_trainrig("validate --no-report --baseline " + dir.string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("has no measurements"), std::string::npos) << r.err;
    r = run_trainrig("report diff " + dir.string() + " " + fixture("cpu-only"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("report.json"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace trainrig::test

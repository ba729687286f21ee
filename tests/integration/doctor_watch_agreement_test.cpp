// doctor and watch judge a GPU condition the same way. Each case plants one condition on a
// healthy machine (its tree and its fake NVML answers) and runs both commands on it: doctor
// `fail` <=> a critical watch alert <=> `watch --once` exit 1; doctor `warn` <=> a warning alert
// (exit 1 only under --strict); doctor `pass` <=> no alert.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "doctor_json.h"

namespace trainrig::test {
namespace {

namespace fs = std::filesystem;

struct Condition {
    std::string name;
    std::string rule;                     // the doctor rule that judges it
    std::string expect;                   // doctor's status: pass, warn or fail
    std::function<void(json& gpu)> nvml;  // changes to GPU 0's NVML answers
    std::string kmsg;                     // a kernel log record to add
};

const char* kMachine = "epyc-4xa100-healthy";  // GPU 0 is 0000:41:00.0

std::vector<Condition> conditions() {
    auto clocks = [](uint64_t bits) {
        return [bits](json& g) {
            g["clock_event_reasons"] = bits;
            g["utilization"]["gpu"] = 100;
        };
    };
    return {
        {"healthy", "gpu.temperature", "pass", [](json&) {}, ""},
        {"temperature_near_slowdown", "gpu.temperature", "warn",
         [](json& g) { g["temperature"] = 86; }, ""},  // slowdown 89
        {"temperature_at_slowdown", "gpu.temperature", "fail",
         [](json& g) { g["temperature"] = 89; }, ""},
        {"temperature_over_max_operating", "gpu.temperature", "warn",
         [](json& g) {
             g["temperature"] = 83;
             g["thresholds"]["gpu_max"] = 80;
         },
         ""},
        {"sw_thermal_slowdown", "gpu.clock-events", "fail", clocks(0x20), ""},
        {"hw_thermal_slowdown", "gpu.clock-events", "fail", clocks(0x40), ""},
        {"hw_slowdown", "gpu.clock-events", "fail", clocks(0x8), ""},
        {"power_brake", "gpu.clock-events", "fail", clocks(0x80), ""},
        {"sw_power_cap", "gpu.clock-events", "pass", clocks(0x4), ""},
        {"row_remap_pending", "gpu.remapped-rows", "fail",
         [](json& g) { g["remapped_rows"]["pending"] = true; }, ""},
        {"row_remap_failed", "gpu.remapped-rows", "fail",
         [](json& g) { g["remapped_rows"]["failure"] = true; }, ""},
        {"rows_remapped_uncorrectable", "gpu.remapped-rows", "warn",
         [](json& g) { g["remapped_rows"]["uncorrectable"] = 2; }, ""},
        {"ecc_uncorrected_since_load", "gpu.ecc", "fail",
         [](json& g) {
             g["ecc"]["volatile_uncorrected"] = 1;
             g["ecc"]["aggregate_uncorrected"] = 1;
         },
         ""},
        {"gpu_lost", "gpu.count", "fail", [](json& g) { g["lost"] = true; }, ""},
        {"xid_fatal", "kmsg.xid", "fail", [](json&) {},
         "3,900,183522117311,-;NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has "
         "fallen off the bus."},
        {"xid_nonfatal", "kmsg.xid", "warn", [](json&) {},
         "4,900,183522117311,-;NVRM: Xid (PCI:0000:41:00): 13, pid=2345, name=python3, Graphics "
         "SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address"},
        // Xid 79 and the driver's plain line for the same event: one finding, one alert.
        {"xid_79_with_its_plain_line", "kmsg.xid", "fail", [](json&) {},
         "3,900,183522117311,-;NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has "
         "fallen off the bus.\n3,901,183522117400,-;NVRM: GPU 0000:41:00.0: GPU has fallen off "
         "the bus."},
        // The tree's uptime is 4320 min; a Gen4 x16 link allows 15.36 replays a minute.
        {"pcie_replays_within_the_link_limit", "gpu.pcie-replay", "pass",
         [](json& g) { g["pcie"]["replay_counter"] = 60000; }, ""},
        {"pcie_replays_over_the_link_limit", "gpu.pcie-replay", "warn",
         [](json& g) { g["pcie"]["replay_counter"] = 70000; }, ""},
        {"pcie_replays_over_a_narrow_link_limit", "gpu.pcie-replay", "warn",
         [](json& g) {
             g["pcie"]["replay_counter"] = 40000;  // 9.3 a minute: over x8's 7.68
             g["pcie"]["width_max"] = 8;
         },
         ""},
        {"nvlink_board_link_down", "gpu.nvlink", "fail",
         [](json& g) { g["nvlinks"][0]["active"] = false; }, ""},
        {"aer_fatal", "kmsg.pcie-aer", "fail", [](json&) {},
         "3,900,183522117311,-;nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected "
         "(Fatal), type=Transaction Layer, (Receiver ID)"},
        {"aer_nonfatal", "kmsg.pcie-aer", "warn", [](json&) {},
         "4,900,183522117311,-;nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected "
         "(Non-Fatal), type=Transaction Layer, (Requester ID)"},
        {"aer_corrected", "kmsg.pcie-aer", "warn", [](json&) {},
         "4,900,183522117311,-;nvidia 0000:41:00.0: PCIe Bus Error: severity=Corrected, "
         "type=Physical Layer, (Receiver ID)"},
    };
}

class DoctorWatchAgreement : public ::testing::TestWithParam<Condition> {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("agree-watch-" + GetParam().name + "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        root_ = fixture(kMachine);
        if (!GetParam().kmsg.empty()) {  // a copy of the tree, with the record in its log
            root_ = (dir_ / "root").string();
            fs::copy(fixture(kMachine), root_,
                     fs::copy_options::recursive | fs::copy_options::copy_symlinks);
            std::ofstream(fs::path(root_) / "dev/kmsg", std::ios::app) << GetParam().kmsg << "\n";
        }
        auto model = json::parse(
            slurp(std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/nvml/" + kMachine + ".json"));
        GetParam().nvml(model["gpus"][0]);
        std::ofstream(dir_ / "nvml.json") << model.dump(1);
        env_ = "TRAINRIG_FAKE_NVML=" + (dir_ / "nvml.json").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path dir_;
    std::string root_, env_;
};

TEST_P(DoctorWatchAgreement, SameVerdict) {
    const auto& c = GetParam();
    auto d = run_trainrig("doctor --json --root " + root_ + " --only " + c.rule, env_);
    ASSERT_NE(d.rc, 2) << d.err;
    const auto report = json::parse(d.out);
    const auto& f = finding(report, c.rule);
    ASSERT_EQ(f["status"], c.expect) << f["summary"];

    auto w = run_trainrig("watch --once --json --root " + root_, env_);
    ASSERT_NE(w.rc, 2) << w.err;
    const auto sample = json::parse(w.out);
    std::string worst = "none";
    std::string alerts;
    for (const auto& a : sample["alerts"]) {
        alerts += a.dump() + "\n";
        if (a["severity"] == "critical" || worst == "none") worst = a["severity"];
    }
    const std::string want = c.expect == "fail"   ? "critical"
                             : c.expect == "warn" ? "warning"
                                                  : "none";
    if (c.expect != "pass") {  // one alert per condition (two where a verdict has two rules)
        EXPECT_LE(sample["alerts"].size(), 2u) << alerts;
    }
    EXPECT_EQ(worst, want) << "doctor " << c.rule << " says " << c.expect << " (" << f["summary"]
                           << "); watch alerts:\n"
                           << alerts;
    EXPECT_EQ(w.rc, c.expect == "fail" ? 1 : 0) << alerts;
    auto strict = run_trainrig("watch --once --strict --root " + root_, env_);
    EXPECT_EQ(strict.rc, c.expect == "pass" ? 0 : 1) << strict.out;
    EXPECT_EQ(d.rc, c.expect == "fail" ? 1 : 0) << d.out.substr(0, 300);
}

INSTANTIATE_TEST_SUITE_P(Conditions, DoctorWatchAgreement, ::testing::ValuesIn(conditions()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace trainrig::test

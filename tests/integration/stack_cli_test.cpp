// `trainrig stack` and `trainrig stack check` as a user runs them: an answer for every catalog
// GPU, the traps as exit 2 with one sentence, the lock `doctor --lock` checks, and `stack check`
// and doctor agreeing on the same snapshots.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../unit/nvml_builder.h"
#include "../unit/temp_dir_test.h"
#include "plan/hardware.h"
#include "run_binary.h"
#include "snapshot/snapshot.h"

namespace trainrig::test {
namespace {

using json = nlohmann::json;

class StackCli : public TempDirTest {
protected:
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    void write(const std::string& name, const std::string& text) const {
        std::ofstream(path(name)) << text;
    }
    // A snapshot of four B200s on a CUDA 12.4 driver with torch 2.5.1+cu124: a driver older than
    // the recommendation and a wheel without sm_100.
    std::string broken_b200_snapshot() const {
        Snapshot s = healthy_gpus();
        s.nvidia.version = known<std::string>("550.54.15");
        auto& n = s.nvml.value();
        n.driver_version = known<std::string>("550.54.15");
        n.cuda_driver_version = known<int64_t>(12040);
        for (auto& g : n.gpus) {
            g.name = known<std::string>("NVIDIA B200");
            g.compute_capability = known<std::string>("10.0");
            g.pci_device_id = known<uint64_t>(0x2901);
        }
        auto& t = s.stack.value().torch.value();
        t.version = "2.5.1+cu124";
        t.cuda = known<std::string>("12.4");
        const std::string file = path("b200.json");
        write("b200.json", snapshot_to_json(s).dump());
        return file;
    }
};

TEST_F(StackCli, AnswersForEveryCatalogGpu) {
    for (const auto& g : plan::builtin_hardware().gpus) {
        auto r = run_trainrig("stack --json --distro ubuntu2204 --gpu " + g.id);
        ASSERT_EQ(r.rc, 0) << g.id << "\n" << r.err;
        auto doc = json::parse(r.out, nullptr, false);
        ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 300);
        EXPECT_EQ(doc["schema"], "trainrig.stack");
        EXPECT_EQ(doc["command"], "stack");
        EXPECT_EQ(doc["exit_code"], 0);
        EXPECT_EQ(doc["gpu"]["id"], g.id);
        EXPECT_TRUE(doc["judged"].get<bool>());
        EXPECT_EQ(doc["components"].size(), 6u) << g.id;
        EXPECT_FALSE(doc["install"]["steps"].empty()) << g.id;
        EXPECT_TRUE(doc["pip"].get<std::string>().starts_with("pip install 'torch=="));
    }
    auto table = run_trainrig("stack --gpu H100-SXM --distro debian12 -v");
    ASSERT_EQ(table.rc, 0) << table.err;
    for (const char* want : {"component", "driver", "PyTorch", "Sources:", "[1]",
                             "Install on Debian 12", "cuda-keyring_1.1-1_all.deb", "# "})
        EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
}

TEST_F(StackCli, TrapsAreOneSentenceAndExit2) {
    struct Case {
        std::string args, says;
    };
    const std::vector<Case> cases = {
        {"--gpu b200 --cuda 12.4", "--cuda 12.4 cannot drive the B200"},
        {"--gpu h100-sxm --cuda 11.8 --torch 2.8", "--torch 2.8 ships no CUDA 11.8 build"},
        {"--gpu b200 --torch 2.5", "--torch 2.5 has no wheel with kernels for compute capability"},
        {"--gpu h1000", "--gpu h1000: no such GPU (known: "},
        {"--gpu h100-sxm --distro fedora44", "--distro fedora44"},
    };
    for (const auto& c : cases) {
        auto r = run_trainrig("stack " + c.args);
        EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
        EXPECT_TRUE(r.out.empty()) << c.args;
        EXPECT_EQ(r.err.rfind("trainrig stack: " + c.says, 0), 0u) << c.args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}

TEST_F(StackCli, NewerThanTheDataIsAWarningNotAGuess) {
    auto r = run_trainrig("stack --gpu h100-sxm --torch 2.99 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_FALSE(doc["judged"].get<bool>());
    EXPECT_TRUE(doc["install"].is_null());
    ASSERT_EQ(doc["warnings"].size(), 1u);
    EXPECT_NE(doc["warnings"][0].get<std::string>().find("newer than the data (current to "),
              std::string::npos);
}

TEST_F(StackCli, DataFromAFileAndItsErrors) {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/src/stack/stack_data.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string from = "current_to = \"";
    text.replace(text.find(from) + from.size(), 10, "2031-01-01");
    write("data.toml", text);
    auto r = run_trainrig("stack --gpu b200 --json --stack-data " + path("data.toml"));
    ASSERT_EQ(r.rc, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["data"]["current_to"], "2031-01-01");
    EXPECT_EQ(doc["data"]["source"], path("data.toml"));
    write("bad.toml", "schema = \"trainrig.stack.data\"\nschema_version = 1\ncurrent_to = 3\n");
    auto bad = run_trainrig("stack --gpu b200 --stack-data " + path("bad.toml"));
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("\"current_to\" must be a date"), std::string::npos) << bad.err;
    auto env = run_trainrig("stack --gpu b200", "TRAINRIG_STACK_DATA=" + path("bad.toml"));
    EXPECT_EQ(env.rc, 2) << env.out;
}

// `stack --lock` writes what `doctor --lock` reads; a machine unlike the recommendation drifts.
TEST_F(StackCli, TheLockIsAcceptedByDoctor) {
    auto r = run_trainrig("stack --gpu b200 --distro debian12 --lock " + path("stack.lock"));
    ASSERT_EQ(r.rc, 0) << r.err;
    auto lock = json::parse(std::ifstream(path("stack.lock")));
    EXPECT_EQ(lock["schema"], "trainrig.stack.lock");
    EXPECT_TRUE(lock["versions"]["nvidia_driver"].get<std::string>().starts_with(">="));
    EXPECT_TRUE(lock["versions"]["torch"].get<std::string>().ends_with(".*"));
    EXPECT_TRUE(lock["origin"].get<std::string>().starts_with("trainrig stack for B200"));
    const std::string snap = broken_b200_snapshot();
    auto d = run_trainrig("doctor --json --only stack.drift --snapshot " + snap + " --lock " +
                          path("stack.lock"));
    EXPECT_EQ(d.rc, 1) << d.err;
    auto doc = json::parse(d.out);
    const auto& f = doc["findings"][0];
    EXPECT_EQ(f["id"], "stack.drift");
    EXPECT_EQ(f["status"], "fail");
    EXPECT_NE(f["evidence"].dump().find("nvidia_driver: locked >="), std::string::npos) << f.dump();
    // The same machine tree's driver against the lock, read from its files.
    auto tree = run_trainrig("doctor --json --only stack.drift --root " + fixture("hgx-8xh100") +
                             " --lock " + path("stack.lock"));
    EXPECT_EQ(tree.rc, 1) << tree.err;
}

// The same snapshot judged by both commands: doctor's stack findings are stack check's.
TEST_F(StackCli, StackCheckAndDoctorAgree) {
    const std::string snap = broken_b200_snapshot();
    auto c = run_trainrig("stack check --json --snapshot " + snap);
    EXPECT_EQ(c.rc, 1) << c.err;
    auto check = json::parse(c.out);
    EXPECT_EQ(check["schema"], "trainrig.stack.check");
    EXPECT_EQ(check["command"], "stack check");
    EXPECT_EQ(check["exit_code"], 1);
    EXPECT_EQ(check["gpu"]["id"], "b200");
    auto d = run_trainrig(
        "doctor --json --only stack.cuda-driver,stack.torch,stack.nccl "
        "--snapshot " +
        snap);
    auto doctor = json::parse(d.out);
    int compared = 0;
    for (const auto& df : doctor["findings"])
        for (const auto& cf : check["findings"])
            if (cf["id"] == df["id"]) {
                EXPECT_EQ(cf["status"], df["status"]) << df["id"];
                EXPECT_EQ(cf["summary"], df["summary"]) << df["id"];
                ++compared;
            }
    EXPECT_EQ(compared, 3);
    bool torch_fails = false;
    for (const auto& cf : check["findings"])
        if (cf["id"] == "stack.torch")
            torch_fails = cf["status"] == "fail" && cf["summary"].get<std::string>().find(
                                                        "no kernel image") != std::string::npos;
    EXPECT_TRUE(torch_fails) << c.out;
    auto table = run_trainrig("stack check -v --snapshot " + snap);
    EXPECT_EQ(table.rc, 1);
    for (const char* want : {"this machine", "recommended", "FAIL", "recommended.driver",
                             "cudaErrorInsufficientDriver", "fix:"})
        EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
}

// Every machine tree with GPUs, its GPUs from the fake NVML: the doctor findings `stack check`
// reports are doctor's, status and summary.
TEST_F(StackCli, StackCheckAndDoctorAgreeOnTheMachineTrees) {
    for (const char* machine :
         {"article-box", "epyc-4xa100-healthy", "hgx-8xh100", "rtx4090-workstation"}) {
        const std::string env = "TRAINRIG_FAKE_NVML=" + std::string(TRAINRIG_SOURCE_DIR) +
                                "/tests/fixtures/nvml/" + machine + ".json";
        auto c = run_trainrig("stack check --json --root " + fixture(machine), env);
        ASSERT_NE(c.rc, 2) << machine << "\n" << c.err;
        auto d = run_trainrig(
            "doctor --json --only stack.cuda-driver,stack.torch,stack.nccl "
            "--root " +
                fixture(machine),
            env);
        ASSERT_NE(d.rc, 2) << machine << "\n" << d.err;
        auto check = json::parse(c.out);
        auto doctor = json::parse(d.out);
        int compared = 0;
        for (const auto& df : doctor["findings"])
            for (const auto& cf : check["findings"])
                if (cf["id"] == df["id"]) {
                    EXPECT_EQ(cf["status"], df["status"]) << machine << " " << df["id"];
                    EXPECT_EQ(cf["summary"], df["summary"]) << machine << " " << df["id"];
                    ++compared;
                }
        EXPECT_EQ(compared, 3) << machine;
        // The trees' drivers (535 and 550) are older than the recommended CUDA needs.
        for (const auto& cf : check["findings"])
            if (cf["id"] == "recommended.driver") {
                EXPECT_EQ(cf["status"], "fail") << machine;
            }
        EXPECT_EQ(c.rc, 1) << machine;
    }
}

TEST_F(StackCli, MachineTreesAreDetectedFromThePciBus) {
    auto s = run_trainrig("stack --json --root " + fixture("hgx-8xh100"));
    ASSERT_EQ(s.rc, 0) << s.err;
    auto doc = json::parse(s.out);
    EXPECT_EQ(doc["gpu"]["id"], "h100-sxm");
    EXPECT_EQ(doc["install"]["distro"], "ubuntu2204");  // the tree's /etc/os-release
    auto c = run_trainrig("stack check --root " + fixture("hgx-8xh100"));
    EXPECT_EQ(c.rc, 1) << c.err;  // driver 550: too old for the recommended CUDA
    auto none = run_trainrig("stack --root " + fixture("cpu-only"));
    EXPECT_EQ(none.rc, 2);
    EXPECT_NE(none.err.find("no NVIDIA GPU found"), std::string::npos) << none.err;
    EXPECT_NE(none.err.find("trainrig stack --gpu "), std::string::npos) << none.err;
    // The hint runs the command that asked again.
    auto check_none = run_trainrig("stack check --root " + fixture("cpu-only"));
    EXPECT_EQ(check_none.rc, 2);
    EXPECT_NE(check_none.err.find("trainrig stack check --gpu "), std::string::npos)
        << check_none.err;
    auto both = run_trainrig("stack check --root " + fixture("cpu-only") + " --snapshot x.json");
    EXPECT_EQ(both.rc, 2);
}

}  // namespace
}  // namespace trainrig::test

// `stack check` and doctor on the same snapshots: the traps (a driver older than the toolkit's
// minimum, a GPU newer than the CUDA build, a wheel without the GPU's architecture) get the same
// verdict from both, and the differences from the recommendation carry their consequence.
#include "doctor/stack_check.h"

#include <gtest/gtest.h>

#include <map>

#include "doctor/report.h"
#include "nvml_builder.h"
#include "rule_test_util.h"
#include "stack/compat.h"

namespace trainrig::stack {
namespace {

using test::known;

// Four B200s on a driver that runs CUDA 12.8, with torch as given.
Snapshot b200_machine(const std::string& torch, const std::string& torch_cuda,
                      const std::string& driver = "570.26", int64_t driver_cuda = 12080) {
    Snapshot s = test::healthy_gpus();
    s.nvidia.version = known(driver);
    auto& n = s.nvml.value();
    n.driver_version = known(driver);
    n.cuda_driver_version = known(driver_cuda);
    for (auto& g : n.gpus) {
        g.name = known<std::string>("NVIDIA B200");
        g.compute_capability = known<std::string>("10.0");
        g.pci_device_id = known<uint64_t>(0x2901);
    }
    auto& st = s.stack.value();
    st.cuda_runtime_version = known<int64_t>(12080);
    st.nvcc_version = known<std::string>("12.8.93");
    st.nvcc_path = "/usr/local/cuda/bin/nvcc";
    auto& t = st.torch.value();
    t.version = torch;
    t.cuda = known(torch_cuda);
    t.nccl = Fact<std::string>::failed({Errc::kUnsupported, "not named"});
    return s;
}

Recommendation recommend_for(const Snapshot& s, Pins pins = {}) {
    auto gpu = detected_gpus(builtin_stack_data(), s, "stack check");
    EXPECT_TRUE(gpu.ok()) << gpu.status().message();
    auto r = recommend(builtin_stack_data(), *gpu, pins, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
}

const Finding& finding_of(const StackCheck& c, const std::string& id) {
    for (const auto& f : c.findings)
        if (f.id == id) return f;
    static const Finding none;
    ADD_FAILURE() << "no finding " << id;
    return none;
}

// The one-truth property: every doctor stack rule that `stack check` reports is exactly the
// finding doctor gives on the same snapshot.
void expect_agreement(const Snapshot& s, const StackCheck& c) {
    for (const auto& id : doctor_stack_rule_ids()) {
        const Finding doctor = test::judge_one(id, s);
        const Finding& mine = finding_of(c, id);
        EXPECT_EQ(mine.status, doctor.status) << id << ": " << mine.summary;
        EXPECT_EQ(mine.summary, doctor.summary) << id;
        EXPECT_EQ(mine.evidence, doctor.evidence) << id;
    }
}

// Each row says what its recommended.* finding says, made worse (never better) by doctor's
// finding about the same component; a row whose recommendation is not recorded never passes.
void expect_rows_follow_findings(const StackCheck& c) {
    const std::map<std::string, std::pair<std::string, std::string>> ids = {
        {"driver", {"recommended.driver", ""}},
        {"CUDA toolkit", {"recommended.cuda", "stack.cuda-driver"}},
        {"PyTorch", {"recommended.torch", "stack.torch"}},
        {"NCCL", {"recommended.nccl", "stack.nccl"}}};
    for (const auto& row : c.rows) {
        ASSERT_TRUE(ids.count(row.component)) << row.component;
        const auto& [recommended, doctor] = ids.at(row.component);
        const Finding& rec = finding_of(c, recommended);
        FindingStatus want = rec.status;
        if (!doctor.empty() && finding_of(c, doctor).status != FindingStatus::kSkip)
            want = worst_of(want, finding_of(c, doctor).status);
        if (row.recommended == "not recorded" || row.recommended == "not judged")
            want = worst_of(want, FindingStatus::kSkip);
        EXPECT_EQ(row.status, want) << row.component << ": " << rec.summary;
    }
}

TEST(StackCheck, DetectsTheGpusFromTheDriver) {
    const auto s = b200_machine("2.8.0+cu128", "12.8");
    auto g = detected_gpus(builtin_stack_data(), s, "stack check");
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(g->ccs, std::vector<ComputeCapability>{100});
    EXPECT_EQ(g->id, "b200");
    EXPECT_EQ(g->name, "4 x NVIDIA B200");
    // Without NVML the PCI device id names the model.
    auto pci_only = test::healthy();
    pci_only.nvml = Fact<NvmlFacts>::failed({Errc::kUnsupported, "not read under --root"});
    auto a = detected_gpus(builtin_stack_data(), pci_only, "stack check");
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->id, "a100-80g-sxm");
    EXPECT_EQ(a->ccs, std::vector<ComputeCapability>{80});
    auto none = test::healthy();
    none.pci_devices = Fact<std::vector<PciDevice>>::known({});
    none.nvml = Fact<NvmlFacts>::failed({Errc::kNotFound, "no libnvidia-ml.so.1"});
    auto e = detected_gpus(builtin_stack_data(), none, "stack check");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find("no NVIDIA GPU found"), std::string::npos);
    // The hint names the command that asked.
    EXPECT_NE(e.status().next_step().find("trainrig stack check --gpu "), std::string::npos)
        << e.status().next_step();
    EXPECT_NE(detected_gpus(builtin_stack_data(), none, "stack")
                  .status()
                  .next_step()
                  .find("trainrig stack --gpu "),
              std::string::npos);
}

// Trap: a PyTorch wheel without the GPU's architecture (2.5 has no sm_100).
TEST(StackCheck, AWheelWithoutTheArchitectureFailsInBothCommands) {
    const auto s = b200_machine("2.5.1+cu124", "12.4");
    const auto r = recommend_for(s);
    const auto c = check_stack(builtin_stack_data(), s, r);
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    const Finding& torch = finding_of(c, "stack.torch");
    EXPECT_EQ(torch.status, FindingStatus::kFail);
    EXPECT_NE(torch.summary.find("no kernel image is available for execution on the device"),
              std::string::npos)
        << torch.summary;
    EXPECT_NE(torch.summary.find("compute capability 10.0"), std::string::npos);
    EXPECT_NE(torch.remedy.find("--index-url https://download.pytorch.org/whl/cu"),
              std::string::npos)
        << torch.remedy;
    EXPECT_EQ(finding_of(c, "recommended.torch").status, FindingStatus::kWarn);
    // The same machine with a wheel that has sm_100 passes the rule.
    const auto fixed = b200_machine("2.8.0+cu128", "12.8");
    EXPECT_EQ(test::judge_one("stack.torch", fixed).status, FindingStatus::kPass)
        << test::judge_one("stack.torch", fixed).summary;
}

// Trap: a GPU newer than the CUDA toolkit installed (nvcc 12.4 cannot target sm_100).
TEST(StackCheck, AGpuNewerThanTheToolkitWarnsInBothCommands) {
    auto s = b200_machine("2.8.0+cu128", "12.8");
    s.stack.value().nvcc_version = known<std::string>("12.4.131");
    s.stack.value().cuda_runtime_version = known<int64_t>(12040);
    const auto c = check_stack(builtin_stack_data(), s, recommend_for(s));
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    const Finding& f = finding_of(c, "stack.cuda-driver");
    EXPECT_EQ(f.status, FindingStatus::kWarn);
    EXPECT_NE(f.summary.find("compute capability 10.0 (Blackwell) needs CUDA 12.8 or newer"),
              std::string::npos)
        << f.summary;
}

// Trap: a driver older than the toolkit's minimum (a CUDA 13.2 runtime on a CUDA 12.4 driver).
TEST(StackCheck, ADriverOlderThanTheToolkitFailsInBothCommands) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "550.54.15", 12040);
    s.stack.value().cuda_runtime_version = known<int64_t>(13020);
    s.stack.value().nvcc_version = known<std::string>("13.2.51");
    const auto r = recommend_for(s);
    const auto c = check_stack(builtin_stack_data(), s, r);
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    const Finding& doctor = finding_of(c, "stack.cuda-driver");
    EXPECT_EQ(doctor.status, FindingStatus::kFail);
    EXPECT_NE(doctor.summary.find("supports CUDA 12.4 at most"), std::string::npos);
    EXPECT_EQ(finding_of(c, "stack.torch").status, FindingStatus::kFail);
    const Finding& driver = finding_of(c, "recommended.driver");
    EXPECT_EQ(driver.status, FindingStatus::kFail);
    EXPECT_NE(driver.summary.find("cudaErrorInsufficientDriver"), std::string::npos)
        << driver.summary;
    EXPECT_NE(driver.remedy.find("R" + std::to_string(r.driver_branch)), std::string::npos);
    // R550 has ended: said in the evidence even under the failure.
    bool ended = false;
    for (const auto& e : driver.evidence) ended |= e.find("end of life") != std::string::npos;
    EXPECT_TRUE(ended);
    EXPECT_EQ(doctor_exit_code(c.findings, false), 1);
}

TEST(StackCheck, MinorVersionCompatibilityWarns) {
    // R580 runs CUDA 13.2 programs through minor-version compatibility.
    auto s = b200_machine("2.14.0+cu132", "13.2", "580.95.05", 13000);
    s.stack.value().cuda_runtime_version = known<int64_t>(13000);
    s.stack.value().nvcc_version = known<std::string>("13.2.51");
    const auto c = check_stack(builtin_stack_data(), s, recommend_for(s));
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    EXPECT_EQ(finding_of(c, "recommended.driver").status, FindingStatus::kWarn);
    EXPECT_EQ(finding_of(c, "stack.torch").status, FindingStatus::kWarn);
}

TEST(StackCheck, TheRecommendedStackPasses) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "595.58.03", 13020);
    const auto r = recommend_for(s);
    ASSERT_EQ(r.cuda, 13020);
    auto& st = s.stack.value();
    st.cuda_runtime_version = known<int64_t>(13020);
    st.nvcc_version = known<std::string>("13.2.51");
    st.nccl_version = known<int64_t>(23007);
    st.torch.value().nccl = known<std::string>("2.30.7");
    const auto c = check_stack(builtin_stack_data(), s, r);
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    for (const auto& f : c.findings)
        EXPECT_EQ(f.status, FindingStatus::kPass) << f.id << ": " << f.summary;
    EXPECT_EQ(doctor_exit_code(c.findings, false), 0);
    for (const auto& row : c.rows) EXPECT_EQ(row.status, FindingStatus::kPass) << row.component;
}

TEST(StackCheck, AReplacedNcclIsNamed) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "595.58.03", 13020);
    s.stack.value().torch.value().nccl = known<std::string>("2.28.9");
    const auto c = check_stack(builtin_stack_data(), s, recommend_for(s));
    const Finding& f = finding_of(c, "recommended.nccl");
    EXPECT_EQ(f.status, FindingStatus::kWarn);
    EXPECT_NE(f.summary.find("not the 2.30.7 its wheel pins"), std::string::npos) << f.summary;
    EXPECT_NE(f.remedy.find("nvidia-nccl-cu13==2.30.7"), std::string::npos);
}

// Torch's own NCCL unknown: the system's is compared with the recommended wheel's, and a
// difference is not a pass, in the finding or in its row.
TEST(StackCheck, ASystemNcclOtherThanTheRecommendedWarns) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "595.58.03", 13020);
    auto& st = s.stack.value();
    st.cuda_runtime_version = known<int64_t>(13020);
    st.nvcc_version = known<std::string>("13.2.51");
    st.nccl_version = known<int64_t>(22809);
    const auto r = recommend_for(s);
    ASSERT_EQ(r.build->nccl, "2.30.7");
    const auto c = check_stack(builtin_stack_data(), s, r);
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    const Finding& f = finding_of(c, "recommended.nccl");
    EXPECT_EQ(f.status, FindingStatus::kWarn);
    EXPECT_NE(f.summary.find("the system NCCL 2.28.9 differs from the 2.30.7"), std::string::npos)
        << f.summary;
    EXPECT_NE(f.remedy.find("libnccl2=2.30.7-1+cuda13.2"), std::string::npos) << f.remedy;
    EXPECT_EQ(c.rows[3].component, "NCCL");
    EXPECT_EQ(c.rows[3].status, FindingStatus::kWarn);
    // The same version passes.
    st.nccl_version = known<int64_t>(23007);
    const auto same = check_stack(builtin_stack_data(), s, r);
    EXPECT_EQ(finding_of(same, "recommended.nccl").status, FindingStatus::kPass);
    expect_rows_follow_findings(same);
    // Torch's own NCCL, its wheel's, but not the recommendation's: not a pass either.
    auto older = b200_machine("2.11.0+cu130", "13.0", "595.58.03", 13020);
    older.stack.value().torch.value().nccl = known<std::string>("2.28.9");
    const auto o = check_stack(builtin_stack_data(), older, recommend_for(older));
    EXPECT_EQ(finding_of(o, "recommended.nccl").status, FindingStatus::kWarn)
        << finding_of(o, "recommended.nccl").summary;
    expect_rows_follow_findings(o);
}

// A recommendation whose NCCL no source records: the row is not a pass, whatever the machine has.
TEST(StackCheck, ANotRecordedNcclRowNeverPasses) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "595.58.03", 13020);
    s.stack.value().nccl_version = known<int64_t>(23007);
    s.stack.value().torch.value().nccl = known<std::string>("2.30.7");
    auto r = recommend_for(s);
    TorchBuild unrecorded = *r.build;
    unrecorded.nccl.clear();
    r.build = &unrecorded;
    const auto c = check_stack(builtin_stack_data(), s, r);
    expect_rows_follow_findings(c);
    EXPECT_EQ(c.rows[3].recommended, "not recorded");
    EXPECT_EQ(c.rows[3].status, FindingStatus::kSkip);
    // Without torch's NCCL the system's has nothing to be compared with.
    s.stack.value().torch.value().nccl = Fact<std::string>::failed({Errc::kUnsupported, "no"});
    const auto system = check_stack(builtin_stack_data(), s, r);
    EXPECT_EQ(finding_of(system, "recommended.nccl").status, FindingStatus::kSkip);
    EXPECT_EQ(system.rows[3].status, FindingStatus::kSkip);
}

TEST(StackCheck, ReleasesNewerThanTheDataAreNotJudged) {
    auto s = b200_machine("2.99.0+cu139", "13.9", "595.58.03", 13020);
    const auto c = check_stack(builtin_stack_data(), s, recommend_for(s));
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    const Finding& f = finding_of(c, "recommended.torch");
    EXPECT_EQ(f.status, FindingStatus::kWarn);
    EXPECT_NE(f.summary.find("newer than the data"), std::string::npos) << f.summary;
    // Doctor says what it could not judge in the evidence.
    const Finding& d = finding_of(c, "stack.torch");
    bool said = false;
    for (const auto& e : d.evidence) said |= e.find("newer than the data") != std::string::npos;
    EXPECT_TRUE(said);
    // A driver branch newer than the data.
    auto n = b200_machine("2.14.0+cu132", "13.2", "999.10.01", 13090);
    const auto dn = check_stack(builtin_stack_data(), n, recommend_for(n));
    EXPECT_EQ(finding_of(dn, "recommended.driver").status, FindingStatus::kWarn);
    EXPECT_NE(finding_of(dn, "recommended.driver").summary.find("newer than the data"),
              std::string::npos);
}

TEST(StackCheck, AMachineTreeIsJudgedByItsDriverOnly) {
    auto s = b200_machine("2.14.0+cu132", "13.2", "550.54.15", 12040);
    s.stack = Fact<SoftwareStack>::failed({Errc::kUnsupported, "not read under --root"});
    s.nvml = Fact<NvmlFacts>::failed({Errc::kUnsupported, "not read under --root"});
    for (auto& d : s.pci_devices.value()) d.device = known<uint64_t>(0x2901);
    const auto c = check_stack(builtin_stack_data(), s, recommend_for(s));
    expect_agreement(s, c);
    expect_rows_follow_findings(c);
    EXPECT_EQ(finding_of(c, "recommended.driver").status, FindingStatus::kFail);
    EXPECT_EQ(finding_of(c, "recommended.torch").status, FindingStatus::kSkip);
    EXPECT_EQ(c.rows[1].installed, "not read here");
}

}  // namespace
}  // namespace trainrig::stack

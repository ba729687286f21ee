// validate's coverage (validate/coverage.h, docs/report.md "Coverage"): the plan names every
// check once, the class decides what is required, and what ran decides each outcome.
#include "validate/coverage.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "bench/benchmark.h"
#include "doctor/rule.h"
#include "nvml_builder.h"
#include "snapshot_builder.h"
#include "validate/stages/stage_list.h"

namespace trainrig::validate {
namespace {

MachineClass sxm(int gpus, RunLevel level = RunLevel::kQuick, Scope scope = Scope::kGpu) {
    MachineClass c;
    c.scope = scope;
    c.level = level;
    c.gpu_model = "H100 SXM5 80GB";
    c.gpus = c.bench_gpus = gpus;
    c.datacenter = c.remaps_rows = c.nvlink_on_board = true;
    c.nvswitch = gpus >= 8;
    return c;
}

const PlannedCheck& planned(const std::vector<PlannedCheck>& plan, const std::string& id) {
    for (const auto& p : plan)
        if (p.id == id) return p;
    throw std::runtime_error("not in the plan: " + id);
}

bool required(const MachineClass& c, const std::string& id) {
    return planned(coverage_plan(c), id).required;
}

TEST(CoveragePlan, NamesEveryRuleBenchmarkAndStageOnce) {
    std::set<std::string> ids, known;
    for (const auto& p : coverage_plan(MachineClass{})) {
        EXPECT_TRUE(ids.insert(p.id).second) << p.id << " is in the plan twice";
    }
    for (const auto& r : all_rules()) {
        known.insert(r.id);
        EXPECT_TRUE(ids.count(r.id)) << "doctor rule " << r.id << " has no place in the plan";
    }
    for (const auto& b : bench::make_benchmarks()) {
        known.insert(b->id());
        EXPECT_TRUE(ids.count(b->id())) << "benchmark " << b->id() << " has no place in the plan";
    }
    // A stage is a check of its own unless it reads the machine (doctor: its rules are the
    // checks), runs benchmarks (they are) or only describes the machine (topology).
    for (const auto& s : make_stages()) {
        const std::string id = s->id();
        if (s->measures() || id == "doctor" || id == "topology") continue;
        known.insert(s->id());
        EXPECT_TRUE(ids.count(s->id())) << "stage " << s->id() << " has no place in the plan";
    }
    for (const auto& id : ids) EXPECT_TRUE(known.count(id)) << id << " is no check any more";
}

TEST(CoveragePlan, TheClassDecidesWhatIsRequired) {
    // An HGX board of 8: every link, the fabric manager, the pair benchmarks.
    const MachineClass hgx = sxm(8);
    for (const char* id : {"gpu.nvlink", "stack.fabric-manager", "gpu.p2p-topology", "p2p", "nccl",
                           "gemm", "gpu.ecc", "gpu.remapped-rows", "watch", "train"})
        EXPECT_TRUE(required(hgx, id)) << id;
    EXPECT_FALSE(required(hgx, "gpu.retired-pages"));
    // quick leaves out the burn-in and the batch probe; standard needs them.
    EXPECT_FALSE(required(hgx, "burn"));
    EXPECT_FALSE(required(hgx, "batch-probe"));
    EXPECT_TRUE(required(sxm(8, RunLevel::kStandard), "burn"));
    EXPECT_TRUE(required(sxm(8, RunLevel::kStandard), "batch-probe"));
    // 4 board-wired GPUs talk directly: no NVSwitch.
    EXPECT_TRUE(required(sxm(4), "gpu.nvlink"));
    EXPECT_FALSE(required(sxm(4), "stack.fabric-manager"));
    // One GPU has no pairs, and one GPU of a board (a VM's share) no peer to link to.
    for (const char* id : {"gpu.uniform", "gpu.p2p-topology", "p2p", "nccl", "gpu.nvlink"})
        EXPECT_FALSE(required(sxm(1), id)) << id;
    // MIG where the part has it.
    MachineClass mig = sxm(8);
    mig.mig = true;
    EXPECT_TRUE(required(mig, "gpu.mig"));
    EXPECT_FALSE(required(sxm(8), "gpu.mig"));
    EXPECT_NE(planned(coverage_plan(sxm(8)), "gpu.mig").why.find("no MIG"), std::string::npos);
    EXPECT_TRUE(required(sxm(1), "gpu.power-limit"));
    // --gpus 0 measures one GPU of eight: no pairs to measure, the doctor rules still judge all.
    MachineClass one_of_eight = sxm(8);
    one_of_eight.bench_gpus = 1;
    EXPECT_FALSE(required(one_of_eight, "nccl"));
    EXPECT_TRUE(required(one_of_eight, "gpu.p2p-topology"));
    // A PCIe part: NVLink only through a bridge, and the plan says so.
    MachineClass pcie = sxm(4);
    pcie.nvlink_on_board = false;
    EXPECT_FALSE(required(pcie, "gpu.nvlink"));
    EXPECT_NE(planned(coverage_plan(pcie), "gpu.nvlink").why.find("PCIe"), std::string::npos);
    // A desktop GPU has no ECC memory to judge.
    MachineClass geforce = sxm(1);
    geforce.datacenter = geforce.remaps_rows = geforce.nvlink_on_board = false;
    EXPECT_FALSE(required(geforce, "gpu.ecc"));
    EXPECT_FALSE(required(geforce, "gpu.remapped-rows"));
    // A machine tree: configuration only, no benchmark or live stage.
    const MachineClass tree = sxm(8, RunLevel::kQuick, Scope::kTree);
    EXPECT_TRUE(required(tree, "gpu.nvlink"));
    for (const char* id : {"gemm", "train", "cpu-mem", "watch"}) EXPECT_FALSE(required(tree, id));
    // Inputs make their checks required.
    MachineClass with_data = sxm(8);
    with_data.data_dir = true;
    EXPECT_FALSE(required(hgx, "storage"));
    EXPECT_TRUE(required(with_data, "storage"));
    EXPECT_TRUE(required(with_data, "storage.data-dir"));
    // Host-decided checks are never required by the class alone.
    EXPECT_FALSE(required(hgx, "kernel.thp"));
    EXPECT_TRUE(planned(coverage_plan(hgx), "kernel.thp").host_decides);
    // Without GPUs, the kernel log is the host's business.
    EXPECT_FALSE(required(MachineClass{}, "kmsg.xid"));
    EXPECT_TRUE(planned(coverage_plan(MachineClass{}), "kmsg.xid").host_decides);
    EXPECT_TRUE(required(hgx, "kmsg.xid"));
}

TEST(MachineClassTest, ReadFromTheBus) {
    ValidateOptions o;
    Snapshot s = test::healthy();  // four A100-SXM4-80GB on the bus; the driver not read
    MachineClass c = machine_class(s, Scope::kGpu, o);
    EXPECT_EQ(c.gpus, 4);
    EXPECT_EQ(c.gpu_model, "A100-SXM4-80GB");
    EXPECT_TRUE(c.nvlink_on_board);
    EXPECT_TRUE(c.mig);
    EXPECT_TRUE(c.remaps_rows);
    EXPECT_FALSE(c.retires_pages);
    EXPECT_FALSE(c.nvswitch);
    EXPECT_EQ(c.label(), "4x A100-SXM4-80GB, --level quick");
    // NVSwitches on the bus make it a switch system.
    PciDevice sw = test::gpu("0000:05:00.0", 0x22a3);
    sw.class_code = Fact<uint64_t>::known(0x068000);
    s.pci_devices.value().push_back(sw);
    EXPECT_TRUE(machine_class(s, Scope::kGpu, o).nvswitch);
    // One PCIe card among SXM parts: the class has none of the board's properties.
    s = test::healthy();
    test::gpu_at(s, 3).device = Fact<uint64_t>::known(0x20b5);
    c = machine_class(s, Scope::kGpu, o);
    EXPECT_EQ(c.gpu_model, "mixed: A100 80GB PCIe, A100-SXM4-80GB");
    EXPECT_FALSE(c.nvlink_on_board);
    EXPECT_TRUE(c.datacenter);
    // An unknown model is judged on what every GPU has: nothing beyond the basics.
    test::gpu_at(s, 3).device = Fact<uint64_t>::known(0x9999);
    EXPECT_FALSE(machine_class(s, Scope::kGpu, o).datacenter);
    // A container that hides the bus: the driver's GPUs.
    Snapshot hidden = test::healthy_gpus();
    hidden.pci_devices = Fact<std::vector<PciDevice>>::known({});
    EXPECT_EQ(machine_class(hidden, Scope::kGpu, o).gpus,
              static_cast<int>(hidden.nvml.value().gpus.size()));
    // --gpus picks what the benchmarks measure.
    o.gpus = {2};
    EXPECT_EQ(machine_class(test::healthy(), Scope::kGpu, o).bench_gpus, 1);
}

Finding finding(const std::string& id, FindingStatus st, const std::string& summary = "") {
    Finding f;
    f.id = id;
    f.status = st;
    f.summary = summary;
    return f;
}

bench::BenchRecord record(const std::string& bench, double value, std::optional<double> expected) {
    bench::BenchRecord r;
    r.bench = bench;
    r.name = "x";
    r.unit = "bytes/s";
    r.samples = {value, value, value};
    r.expected = expected;
    return r;
}

const CoveredCheck& outcome(const Coverage& c, const std::string& id) {
    for (const auto& k : c.checks)
        if (k.id == id) return k;
    throw std::runtime_error("not covered: " + id);
}

TEST(CoverageTest, EachOutcomeFromWhatRan) {
    std::vector<Finding> findings;
    for (const auto& r : all_rules()) findings.push_back(finding(r.id, FindingStatus::kPass));
    auto set = [&](const std::string& id, FindingStatus st, const std::string& why) {
        for (auto& f : findings)
            if (f.id == id) f = finding(id, st, why);
    };
    set("gpu.nvlink", FindingStatus::kSkip, "links may still be training");
    set("kmsg.xid", FindingStatus::kError, "the kernel log is not readable");
    set("gpu.temperature", FindingStatus::kFail, "GPU 0 at 91 C");
    set("kernel.thp", FindingStatus::kSkip, "kernel built without transparent huge pages");
    set("stack.torch", FindingStatus::kError, "python3 crashed");
    bench::BenchRun b;
    b.records = {record("gemm", 100, 100), record("hbm", 80, 100), record("cpu-mem", 5, {}),
                 record("loader", 1, {})};
    b.errors = {{"nccl", "NCCL could not start"}};
    b.skipped = {{"p2p", "peer access is not supported"}};
    std::vector<StageRecord> stages(3);
    stages[0].name = "topology";
    stages[0].state = StageState::kRan;
    stages[1].name = "watch";
    stages[1].state = StageState::kRan;
    stages[2].name = "training";
    stages[2].state = StageState::kSkipped;
    std::vector<Item> items(1);
    items[0].stage = "watch";
    items[0].level = Level::kWarn;
    RunRecord run{{"h2d", "training"}, &findings, &b, &stages, &items, {}};
    run.bench_stage = {{"h2d", "gpu-bench"}, {"gemm", "gpu-bench"}, {"train", "training"}};

    const Coverage c = cover(sxm(4), run);
    EXPECT_EQ(outcome(c, "gpu.nvlink").outcome, CheckOutcome::kCouldNotRun);
    EXPECT_EQ(outcome(c, "gpu.nvlink").reason, "links may still be training");
    EXPECT_EQ(outcome(c, "kmsg.xid").outcome, CheckOutcome::kCouldNotJudge);
    EXPECT_EQ(outcome(c, "gpu.temperature").outcome, CheckOutcome::kFailed);
    EXPECT_EQ(outcome(c, "gemm").outcome, CheckOutcome::kPassed);
    EXPECT_EQ(outcome(c, "hbm").outcome, CheckOutcome::kWarned);
    EXPECT_EQ(outcome(c, "cpu-mem").outcome, CheckOutcome::kMeasured);
    EXPECT_EQ(outcome(c, "nccl").outcome, CheckOutcome::kCouldNotRun);
    EXPECT_EQ(outcome(c, "nccl").reason, "NCCL could not start");
    EXPECT_EQ(outcome(c, "p2p").reason, "peer access is not supported");
    EXPECT_EQ(outcome(c, "h2d").outcome, CheckOutcome::kSkipped);
    EXPECT_EQ(outcome(c, "train").outcome, CheckOutcome::kSkipped);  // its stage was --skip'd
    EXPECT_EQ(outcome(c, "watch").outcome, CheckOutcome::kWarned);
    // The host decides: a kernel without THP has nothing to judge; an error is never that.
    EXPECT_EQ(outcome(c, "kernel.thp").outcome, CheckOutcome::kNotApplicable);
    EXPECT_FALSE(outcome(c, "kernel.thp").required);
    EXPECT_TRUE(outcome(c, "kernel.swappiness").required);
    EXPECT_TRUE(outcome(c, "stack.torch").required);
    // Not required by this class: not applicable, for the class's reason.
    EXPECT_EQ(outcome(c, "burn").outcome, CheckOutcome::kNotApplicable);
    EXPECT_EQ(outcome(c, "burn").reason, "not at --level quick");

    EXPECT_FALSE(c.complete());
    std::vector<std::string> missing;
    for (const auto* m : c.missing()) missing.push_back(m->id);
    EXPECT_EQ(missing, (std::vector<std::string>{"gpu.nvlink", "stack.torch", "kmsg.xid", "h2d",
                                                 "d2h", "p2p", "nccl", "train"}));
    EXPECT_EQ(c.judged() + missing.size(), c.required());
    EXPECT_EQ(missing_line(c, 3),
              fmt::format("8 of {} required checks not judged: gpu.nvlink, stack.torch, "
                          "kmsg.xid, 5 more",
                          c.required()));
    EXPECT_EQ(outcome(c, "h2d").missing_text(), "h2d (skipped with --skip)");
    EXPECT_EQ(outcome(c, "gpu.nvlink").missing_text(),
              "gpu.nvlink (could not run: links may still be training)");

    const auto j = coverage_json(c);
    EXPECT_EQ(j["class"]["label"], "4x H100 SXM5 80GB, --level quick");
    EXPECT_EQ(j["missing"].size(), 8u);
    EXPECT_FALSE(j["complete"].get<bool>());
}

TEST(CoverageTest, AnAreaSkippedSkipsEachOfItsRules) {
    std::vector<Finding> findings;
    for (const auto& r : all_rules())
        if (!r.id.starts_with("gpu.")) findings.push_back(finding(r.id, FindingStatus::kPass));
    RunRecord run{{"gpu"}, &findings, nullptr, nullptr, nullptr, {}};
    const Coverage c = cover(sxm(4, RunLevel::kQuick, Scope::kTree), run);
    EXPECT_EQ(outcome(c, "gpu.ecc").outcome, CheckOutcome::kSkipped);
    EXPECT_EQ(outcome(c, "pci.gpu-bar").outcome, CheckOutcome::kPassed);
    for (const auto* m : c.missing()) EXPECT_TRUE(m->id.starts_with("gpu.")) << m->id;
}

}  // namespace
}  // namespace trainrig::validate

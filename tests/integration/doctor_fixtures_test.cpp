// trainrig doctor and collect, run as a binary on every machine fixture: exit codes, JSON,
// table and Markdown output, and identical findings from a live tree and from its snapshot.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "doctor_json.h"

namespace trainrig::test {
namespace {

TEST(DoctorFixtures, ArticleBoxReportsEveryProblem) {
    auto doc = doctor_json("article-box", "--data-dir /data", 1);
    EXPECT_EQ(doc["schema"], "trainrig.doctor");
    EXPECT_EQ(doc["exit_code"], 1);
    auto vis = finding(doc, "pci.gpu-visible");
    EXPECT_EQ(vis["status"], "fail");
    EXPECT_NE(vis["summary"].get<std::string>().find("2 of 4"), std::string::npos);
    EXPECT_TRUE(evidence_has(vis, "BAR 1: no space"));
    EXPECT_NE(vis["remedy"].get<std::string>().find("Above 4G"), std::string::npos);
    EXPECT_EQ(finding(doc, "pci.gpu-bar")["status"], "fail");
    auto link = finding(doc, "pci.gpu-link");
    EXPECT_EQ(link["status"], "fail");
    EXPECT_NE(link["summary"].get<std::string>().find("x8 of x16"), std::string::npos);
    EXPECT_EQ(finding(doc, "kernel.swappiness")["status"], "warn");
    auto sysctl = finding(doc, "kernel.sysctl-obsolete");
    EXPECT_EQ(sysctl["status"], "warn");
    EXPECT_TRUE(evidence_has(sysctl, "/etc/sysctl.conf:"));
    EXPECT_TRUE(evidence_has(sysctl, "kernel.sched_latency_ns"));
    EXPECT_TRUE(evidence_has(sysctl, "kernel.sched_min_granularity_ns"));
    auto nccl = finding(doc, "nccl.env");
    EXPECT_EQ(nccl["status"], "fail");
    EXPECT_TRUE(evidence_has(nccl, "NCCL_P2P_DISABLE=1"));
    EXPECT_TRUE(evidence_has(nccl, "NCCL_SOCKET_TIMEOUT"));
    EXPECT_TRUE(evidence_has(nccl, "NCCL_ASYNC_ERROR_HANDLING"));
    auto xid = finding(doc, "kmsg.xid");
    EXPECT_EQ(xid["status"], "fail");
    EXPECT_EQ(xid["data"]["xids"][0]["code"], 79);
    EXPECT_EQ(finding(doc, "storage.data-dir")["status"], "warn");  // SATA SSD
}

TEST(DoctorFixtures, HealthyA100PassesEverything) {
    auto doc =
        doctor_json("epyc-4xa100-healthy", "--data-dir /data", 0, fake_nvml("epyc-4xa100-healthy"));
    // Skipped by design: an A100 remaps rows (no page retirement), no NVSwitch, and a tree's
    // software stack is not read.
    for (const auto& f : doc["findings"]) {
        const std::string id = f["id"];
        const bool skip = id == "gpu.retired-pages" || id.starts_with("stack.");
        EXPECT_EQ(f["status"], skip ? "skip" : "pass") << id << ": " << f["summary"];
    }
    auto numa = finding(doc, "numa.gpu-affinity");
    ASSERT_EQ(numa["data"]["gpus"].size(), 4u);
    EXPECT_EQ(numa["data"]["numa_nodes"], 2);
}

TEST(DoctorFixtures, HgxWithNvswitchesCountsOnlyGpus) {
    auto doc = doctor_json("hgx-8xh100", "--data-dir /data", 0);
    EXPECT_NE(finding(doc, "pci.gpu-visible")["summary"].get<std::string>().find("8 of 8"),
              std::string::npos);
    EXPECT_EQ(finding(doc, "driver.nvidia")["data"]["open_kernel_module"], true);
    EXPECT_EQ(doc["summary"]["fail"], 0);
}

TEST(DoctorFixtures, Rtx4090Workstation) {
    auto doc = doctor_json("rtx4090-workstation", "--data-dir /data", 0);
    EXPECT_EQ(finding(doc, "pci.gpu-visible")["status"], "pass");
    EXPECT_EQ(finding(doc, "pci.gpu-bar")["status"], "pass");  // 256 MiB BAR1 is normal on GeForce
    // At 2.5 GT/s with no driver to say whether it is busy: idle, as gpu.pcie-link takes it.
    EXPECT_EQ(finding(doc, "pci.gpu-link")["status"], "pass");
    EXPECT_NE(finding(doc, "pci.gpu-link")["evidence"].dump().find("speed not judged"),
              std::string::npos);
    EXPECT_EQ(finding(doc, "numa.gpu-affinity")["status"], "pass");  // -1 on one socket is fine
    EXPECT_EQ(finding(doc, "mem.ecc")["status"], "warn");
    EXPECT_EQ(finding(doc, "cpu.governor")["status"], "warn");
}

TEST(DoctorFixtures, CpuOnlyHostPassesWithGpuRulesSkipped) {
    auto doc = doctor_json("cpu-only", "", 0);
    for (const char* id : {"pci.gpu-visible", "pci.gpu-bar", "pci.gpu-link", "numa.gpu-affinity",
                           "driver.nvidia", "kmsg.xid"})
        EXPECT_EQ(finding(doc, id)["status"], "skip") << id;
    EXPECT_EQ(doc["summary"]["fail"], 0);
    EXPECT_EQ(doc["summary"]["error"], 0);
}

TEST(DoctorFixtures, SnapshotGivesIdenticalFindings) {
    for (const char* m :
         {"article-box", "epyc-4xa100-healthy", "hgx-8xh100", "rtx4090-workstation", "cpu-only"}) {
        auto snap =
            std::filesystem::temp_directory_path() / (std::string("trainrig-snap-") + m + ".json");
        auto c =
            run_trainrig("collect --root " + fixture(m) + " --data-dir /data -o " + snap.string());
        ASSERT_EQ(c.rc, 0) << c.err;
        auto live = run_trainrig("doctor --json --root " + fixture(m) + " --data-dir /data");
        auto off = run_trainrig("doctor --json --snapshot " + snap.string());
        EXPECT_EQ(live.rc, off.rc) << m;
        auto a = json::parse(live.out), b = json::parse(off.out);
        EXPECT_EQ(a["findings"], b["findings"]) << m;
        EXPECT_EQ(b["hostname"], a["hostname"]);
        std::filesystem::remove(snap);
    }
}

// A snapshot collected on a real H200 (in a Firecracker VM): BAR0 is 64-bit there, so BAR1
// (256 GiB) is resource 2, not 1.
TEST(DoctorFixtures, RealH200SnapshotFromAVm) {
    auto r = run_trainrig("doctor --json --snapshot " + std::string(TRAINRIG_SOURCE_DIR) +
                          "/tests/fixtures/snapshots/h200-vm.json");
    ASSERT_EQ(r.rc, 0) << r.err << r.out.substr(0, 3000);
    auto doc = json::parse(r.out);
    auto bar = finding(doc, "pci.gpu-bar");
    EXPECT_EQ(bar["status"], "pass");
    EXPECT_TRUE(evidence_has(bar, "0000:00:06.0 (H200): BAR1 256 GiB"));
    EXPECT_EQ(finding(doc, "pci.gpu-visible")["status"], "pass");
    EXPECT_EQ(finding(doc, "pci.gpu-link")["status"], "pass");
    EXPECT_EQ(finding(doc, "driver.nvidia")["data"]["version"], "580.159.04");
    EXPECT_EQ(finding(doc, "storage.data-dir")["status"], "pass");
}

TEST(DoctorOutput, TableAndMarkdown) {
    auto t = run_trainrig("doctor --root " + fixture("article-box"));
    EXPECT_EQ(t.rc, 1);
    EXPECT_NE(t.out.find("\npci\n"), std::string::npos);
    EXPECT_NE(t.out.find("  FAIL  pci.gpu-visible"), std::string::npos);
    EXPECT_EQ(t.out.find('\x1b'), std::string::npos) << "no colour when stdout is not a terminal";
    auto v = run_trainrig("doctor -v --only kmsg.xid --root " + fixture("article-box"));
    EXPECT_NE(v.out.find("fix: Xid 79: power-cycle"), std::string::npos) << v.out;
    auto md = run_trainrig("doctor --format md --root " + fixture("article-box"));
    EXPECT_NE(md.out.find("| fail | `nccl.env` |"), std::string::npos);
    EXPECT_NE(md.out.find("## fail `kmsg.xid`"), std::string::npos);
}

TEST(DoctorOutput, StrictOnlyAndSkip) {
    auto warn_only = run_trainrig("doctor --root " + fixture("rtx4090-workstation"));
    EXPECT_EQ(warn_only.rc, 0);
    EXPECT_EQ(run_trainrig("doctor --strict --root " + fixture("rtx4090-workstation")).rc, 1);
    auto only = run_trainrig("doctor --json --only kernel.swappiness,mem.shm --root " +
                             fixture("article-box"));
    EXPECT_EQ(json::parse(only.out)["findings"].size(), 2u);
    EXPECT_EQ(only.rc, 0);
    auto skip = run_trainrig(
        "doctor --json --skip nccl.env,kmsg.xid,pci.gpu-visible,pci.gpu-bar,pci.gpu-link --root " +
        fixture("article-box"));
    EXPECT_EQ(skip.rc, 0) << skip.out;
}

TEST(DoctorOutput, EnvFileReplacesTheEnvironment) {
    auto file = std::filesystem::temp_directory_path() / "trainrig-it.env";
    std::ofstream(file) << "# from a launch script\nexport NCCL_P2P_DISABLE=1\n";
    auto r = run_trainrig("doctor --json --only nccl.env --root " + fixture("epyc-4xa100-healthy") +
                          " --env-file " + file.string());
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(evidence_has(finding(json::parse(r.out), "nccl.env"), file.string()));
    std::ofstream(file) << "GOOD=1\nnot a variable\n";
    auto bad = run_trainrig("doctor --root " + fixture("epyc-4xa100-healthy") + " --env-file " +
                            file.string());
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("line 2"), std::string::npos) << bad.err;
    std::filesystem::remove(file);
}

}  // namespace
}  // namespace trainrig::test

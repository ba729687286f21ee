// Exit codes, selection, and the three renderers of a doctor report.
#include "doctor/report.h"

#include <gtest/gtest.h>

#include <set>

#include "doctor/render_json.h"
#include "doctor/render_markdown.h"
#include "doctor/render_table.h"
#include "nvml_builder.h"

namespace trainrig::test {
namespace {

Finding make(const std::string& id, FindingStatus st, const std::string& summary) {
    Finding f;
    f.id = id;
    f.title = id + " title";
    f.status = st;
    f.summary = summary;
    f.evidence = {"read /x = 1"};
    f.remedy = "do the thing";
    return f;
}

TEST(ExitCode, FailBeatsErrorBeatsWarn) {
    using enum FindingStatus;
    EXPECT_EQ(doctor_exit_code({make("a.b", kPass, "ok"), make("a.c", kSkip, "n/a")}, false), 0);
    EXPECT_EQ(doctor_exit_code({make("a.b", kWarn, "hmm")}, false), 0);
    EXPECT_EQ(doctor_exit_code({make("a.b", kWarn, "hmm")}, true), 1);
    EXPECT_EQ(doctor_exit_code({make("a.b", kError, "?")}, false), 2);
    EXPECT_EQ(doctor_exit_code({make("a.b", kError, "?"), make("a.c", kFail, "bad")}, false), 1);
}

TEST(Judge, OnlyAndSkipSelectRules) {
    auto s = healthy();
    auto only = judge(s, {}, {{"kernel.swappiness", "mem.shm"}, {}});
    ASSERT_EQ(only.size(), 2u);
    EXPECT_EQ(only[0].id, "kernel.swappiness");
    auto skipped = judge(s, {}, {{}, {"kernel.swappiness"}});
    EXPECT_EQ(skipped.size(), all_rules().size() - 1);
}

TEST(Judge, HealthyMachinePassesEveryRule) {
    // Skipped by design: no --data-dir, page retirement (an A100 remaps rows), no NVSwitch,
    // no --lock.
    const std::set<std::string> skips = {"storage.data-dir", "gpu.retired-pages",
                                         "stack.fabric-manager", "stack.drift"};
    for (const auto& f : judge(healthy_gpus(), {}, {}))
        EXPECT_TRUE(f.status == (skips.count(f.id) ? FindingStatus::kSkip : FindingStatus::kPass))
            << f.id << ": " << f.summary;
}

DoctorReport sample() {
    DoctorReport r;
    r.hostname = "node1";
    r.source = "live machine";
    r.collected_at = "2026-11-30T00:00:00Z";
    r.findings = {make("kernel.swappiness", FindingStatus::kWarn, "vm.swappiness is 60"),
                  make("kernel.thp", FindingStatus::kPass, "fine | really"),
                  make("pci.gpu-link", FindingStatus::kFail, "x8 of x16")};
    return r;
}

TEST(Render, TableGroupsByAreaAndVerboseAddsEvidence) {
    auto plain = render_table(sample(), false, false);
    EXPECT_EQ(plain,
              "trainrig doctor: node1 — live machine\n"
              "\nkernel\n"
              "  WARN  kernel.swappiness  vm.swappiness is 60\n"
              "  PASS  kernel.thp         fine | really\n"
              "\npci\n"
              "  FAIL  pci.gpu-link       x8 of x16\n"
              "\n1 pass, 1 warn, 1 fail, 0 skip, 0 error (-v shows evidence and fixes)\n");
    auto verbose = render_table(sample(), true, false);
    EXPECT_NE(verbose.find("        · read /x = 1\n        fix: do the thing\n"),
              std::string::npos);
    EXPECT_EQ(plain.find('\x1b'), std::string::npos);
    EXPECT_NE(render_table(sample(), false, true).find("\x1b[31m"), std::string::npos);
}

TEST(Render, JsonDocument) {
    auto j = render_json(sample());
    EXPECT_EQ(j["schema"], "trainrig.doctor");
    EXPECT_EQ(j["schema_version"], 1);
    EXPECT_EQ(j["exit_code"], 1);
    EXPECT_EQ(j["summary"]["warn"], 1);
    EXPECT_EQ(j["summary"]["error"], 0);
    ASSERT_EQ(j["findings"].size(), 3u);
    EXPECT_EQ(j["findings"][2]["status"], "fail");
    EXPECT_EQ(j["findings"][2]["remedy"], "do the thing");
    EXPECT_FALSE(j["findings"][0].contains("data"));
}

TEST(Render, MarkdownEscapesCellsAndDetailsProblems) {
    auto md = render_markdown(sample(), false);
    EXPECT_NE(md.find("| warn | `kernel.swappiness` | vm.swappiness is 60 |"), std::string::npos);
    EXPECT_NE(md.find("fine \\| really"), std::string::npos);
    EXPECT_NE(md.find("## fail `pci.gpu-link`"), std::string::npos);
    EXPECT_EQ(md.find("## pass"), std::string::npos);
    EXPECT_NE(render_markdown(sample(), true).find("## pass `kernel.thp`"), std::string::npos);
}

}  // namespace
}  // namespace trainrig::test

// The environment lock: its file format, and rule stack.drift on snapshots.
#include "stack/stack_lock.h"

#include <gtest/gtest.h>

#include "doctor/report.h"
#include "snapshot_builder.h"

namespace trainrig {
namespace {

Snapshot with_stack() {
    auto s = test::healthy();
    s.host.kernel_release = Fact<std::string>::known("6.8.0-45-generic");
    s.nvidia.version = Fact<std::string>::known("550.90.07");
    SoftwareStack st;
    st.cuda_runtime_version = Fact<int64_t>::known(12040);
    st.nvcc_version = Fact<std::string>::known("12.4.131");
    st.nccl_version = Fact<int64_t>::known(22103);
    TorchFacts t;
    t.version = "2.5.1+cu124";
    t.cuda = Fact<std::string>::known("12.4");
    t.nccl = Fact<std::string>::known("2.21.5");
    st.torch = Fact<TorchFacts>::known(t);
    s.stack = Fact<SoftwareStack>::known(st);
    return s;
}

Finding drift(const Snapshot& s, const StackLock& lock,
              std::optional<std::map<std::string, std::optional<std::string>>> files = {}) {
    RuleOptions o;
    o.lock = &lock;
    o.profile_files = std::move(files);
    Selection only;
    only.only = {"stack.drift"};
    auto findings = judge(s, o, only);
    EXPECT_EQ(findings.size(), 1u);
    return findings.empty() ? Finding{} : findings.front();
}

TEST(StackLock, RecordsEveryKnownVersion) {
    const auto v = stack_versions(with_stack());
    const std::map<std::string, std::string> want = {{"kernel", "6.8.0-45-generic"},
                                                     {"nvidia_driver", "550.90.07"},
                                                     {"cuda_runtime", "12.4"},
                                                     {"cuda_toolkit", "12.4.131"},
                                                     {"nccl", "2.21.3"},
                                                     {"torch", "2.5.1+cu124"},
                                                     {"torch_cuda", "12.4"},
                                                     {"torch_nccl", "2.21.5"}};
    EXPECT_EQ(v, want);
}

TEST(StackLock, TextRoundTripAndBadFiles) {
    StackLock lock{"2026-11-30T06:00:00Z",
                   "node07",
                   stack_versions(with_stack()),
                   {{"/etc/trainrig/nccl.env", std::string("unset NCCL_P2P_DISABLE\n")},
                    {"/etc/sysctl.d/99-trainrig.conf", std::nullopt}}};
    auto back = stack_lock_from_text(stack_lock_to_text(lock), "stack.lock");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->versions, lock.versions);
    EXPECT_EQ(back->profile, lock.profile);
    EXPECT_EQ(stack_lock_from_text("{}", "x.lock").status().message(),
              "x.lock: not a stack lock (schema is not \"trainrig.stack.lock\")");
    EXPECT_EQ(stack_lock_from_text(
                  R"({"schema":"trainrig.stack.lock","schema_version":1,"versions":{"torch":2}})",
                  "x.lock")
                  .status()
                  .message(),
              "x.lock: versions.torch is not a string");
}

TEST(StackLock, DriftIsAFailureNamingEachChange) {
    const auto s = with_stack();
    StackLock lock{"2026-11-30T06:00:00Z", "node07", stack_versions(s), {}};
    EXPECT_EQ(drift(s, lock).status, FindingStatus::kPass);
    auto upgraded = s;
    upgraded.nvidia.version = Fact<std::string>::known("560.35.03");
    upgraded.stack.value().torch.value().version = "2.6.0+cu124";
    const auto f = drift(upgraded, lock);
    EXPECT_EQ(f.status, FindingStatus::kFail);
    std::string all;
    for (const auto& e : f.evidence) all += e + "\n";
    EXPECT_NE(all.find("nvidia_driver: locked 550.90.07, now 560.35.03"), std::string::npos) << all;
    EXPECT_NE(all.find("torch: locked 2.5.1+cu124, now 2.6.0+cu124"), std::string::npos) << all;
    auto no_torch = s;
    no_torch.stack.value().torch = Fact<TorchFacts>::absent();
    EXPECT_EQ(drift(no_torch, lock).status, FindingStatus::kFail);  // uninstalled is drift
}

TEST(StackLock, UnprobedStackIsNotDriftAndFilesCompareWhenGiven) {
    const auto s = with_stack();
    StackLock lock{"t", "h", stack_versions(s), {{"/etc/trainrig/nccl.env", std::string("a\n")}}};
    auto tree = s;
    tree.stack = Fact<SoftwareStack>::failed({Errc::kUnsupported, "not probed under --root"});
    auto f = drift(tree, lock);
    EXPECT_EQ(f.status, FindingStatus::kPass);  // files not compared, stack not read
    f = drift(tree, lock,
              std::map<std::string, std::optional<std::string>>{
                  {"/etc/trainrig/nccl.env", std::string("b\n")}});
    EXPECT_EQ(f.status, FindingStatus::kFail);
    EXPECT_NE(f.summary.find("/etc/trainrig/nccl.env: changed since the lock"), std::string::npos)
        << f.summary;
    // Without --lock the rule does not apply.
    Selection only;
    only.only = {"stack.drift"};
    EXPECT_EQ(judge(s, RuleOptions{}, only).front().status, FindingStatus::kSkip);
}

}  // namespace
}  // namespace trainrig

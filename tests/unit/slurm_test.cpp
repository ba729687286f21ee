// The Slurm health check's parts: reading `scontrol show node -o`, and the drain rules a health
// check that shares a cluster with people must keep (slurm/drain_decision.h).
#include <gtest/gtest.h>

#include "slurm/drain_decision.h"
#include "slurm/slurm_node.h"

namespace trainrig::slurm {
namespace {

// A line as Slurm 22.05 prints it (values with spaces and '=', an empty value, the reason with
// its "[user@time]" suffix followed by more fields).
const char* kLine =
    "NodeName=gpu07 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUEfctv=128 CPUTot=128 "
    "CPULoad=0.51 AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:8 NodeAddr=gpu07 "
    "NodeHostName=gpu07 Version=22.05.8 OS=Linux 6.1.0-27-amd64 #1 SMP PREEMPT_DYNAMIC Debian "
    "6.1.115-1 (2024-11-01)  RealMemory=2000000 AllocMem=0 FreeMem=1900000 Sockets=2 Boards=1 "
    "State=IDLE+DRAIN ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=gpu,debug  BootTime=2026-12-01T08:00:00 SlurmdStartTime=2026-12-01T08:01:00 "
    "LastBusyTime=2026-12-03T09:00:00 CfgTRES=cpu=128,mem=2000000M,billing=128 AllocTRES= "
    "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 "
    "ExtSensorsTemp=n/s Reason=trainrig:gpu.pcie-link GPU 3 x8 lnkwidth=8 "
    "[root@2026-12-03T10:00:00] "
    "Comment=(null)";

TEST(SlurmNode, ReadsStateReasonAndPartitions) {
    auto n = parse_node_line(kLine);
    ASSERT_TRUE(n.ok()) << n.status().message();
    EXPECT_EQ(n->name, "gpu07");
    EXPECT_EQ(n->state, "IDLE+DRAIN");
    EXPECT_EQ(n->reason, "trainrig:gpu.pcie-link GPU 3 x8 lnkwidth=8");
    EXPECT_EQ(n->partitions, (std::vector<std::string>{"gpu", "debug"}));
    EXPECT_TRUE(n->drained());
    EXPECT_TRUE(n->drained_by_trainrig());
}

TEST(SlurmNode, StatesAndReasons) {
    auto idle = parse_node_line("NodeName=a State=IDLE Partitions=p Reason=(null)");
    ASSERT_TRUE(idle.ok());
    EXPECT_FALSE(idle->drained());
    EXPECT_EQ(idle->reason, "");
    for (const char* state : {"DRAINED", "DRAINING", "MIXED+DRAIN", "DOWN+DRAIN+NOT_RESPONDING"})
        EXPECT_TRUE(parse_node_line(std::string("NodeName=a State=") + state)->drained()) << state;
    // A reason without Slurm's suffix (an older release) runs to the next field.
    auto op = parse_node_line("NodeName=b State=IDLE+DRAIN Reason=bad fan, ticket 42 Comment=x");
    EXPECT_EQ(op->reason, "bad fan, ticket 42");
    EXPECT_TRUE(op->drained());
    EXPECT_FALSE(op->drained_by_trainrig());
    EXPECT_FALSE(parse_node_line("Arch=x86_64 State=IDLE").ok());
}

TEST(SlurmNode, ManyLines) {
    auto nodes = parse_nodes(std::string(kLine) + "\n\nNodeName=gpu08 State=IDLE Partitions=gpu\n");
    ASSERT_TRUE(nodes.ok());
    ASSERT_EQ(nodes->size(), 2u);
    EXPECT_EQ((*nodes)[1].name, "gpu08");
    EXPECT_TRUE(parse_nodes("No nodes in the system\n")->empty());
}

SlurmNode node(std::string name, std::string state = "IDLE", std::string reason = "",
               std::vector<std::string> partitions = {"gpu"}) {
    return {std::move(name), std::move(state), std::move(reason), std::move(partitions)};
}

health::HealthResult result(health::Health h, std::string id = "gpu.ecc",
                            std::string detail = "GPU 2: 3 uncorrectable ECC errors") {
    health::HealthResult r;
    r.health = h;
    if (h == health::Health::kUnhealthy) r.failures.push_back({std::move(id), std::move(detail)});
    if (h == health::Health::kUnknown) r.unknowns.push_back({"gpu.count", "NVML did not answer"});
    return r;
}

const auto kHealthy = health::Health::kHealthy;
const auto kUnhealthy = health::Health::kUnhealthy;
const auto kUnknown = health::Health::kUnknown;

TEST(DrainDecision, DrainsAnUnhealthyNodeWithTheCheckIdFirst) {
    const auto self = node("n1");
    const auto a = decide(result(kUnhealthy), self, {self, node("n2")});
    EXPECT_EQ(a.kind, ActionKind::kDrain);
    EXPECT_EQ(a.reason, "trainrig:gpu.ecc GPU 2: 3 uncorrectable ECC errors");
    const auto long_reason =
        decide(result(kUnhealthy, "gpu.pcie-link", std::string(300, 'x')), self, {self});
    EXPECT_EQ(long_reason.reason.size(), 80u);
    EXPECT_TRUE(long_reason.reason.starts_with("trainrig:gpu.pcie-link x"));
}

TEST(DrainDecision, AMaintenanceWindowDrainsAndResumesNothing) {
    auto r = result(kUnhealthy);
    r.judged_at = 1796638500;  // 2026-12-07 10:15 UTC
    r.maintenance =
        MaintenanceWindow{r.judged_at - 600, r.judged_at + 3600, "driver upgrade", "ops"};
    const auto self = node("n1");
    const auto a = decide(r, self, {self});
    EXPECT_EQ(a.kind, ActionKind::kNothing);
    EXPECT_EQ(a.message,
              "n1: maintenance until 2026-12-07T11:15:00Z (1.00 h left, by ops: driver "
              "upgrade): nothing is drained or resumed");
    const auto ours = node("n1", "IDLE+DRAIN", "trainrig:gpu.ecc 3 errors");
    EXPECT_EQ(decide(result(kHealthy), ours, {ours}).kind, ActionKind::kResume);
    auto healthy = result(kHealthy);
    healthy.maintenance = r.maintenance;
    EXPECT_EQ(decide(healthy, ours, {ours}).kind, ActionKind::kNothing);
    EXPECT_EQ(health::scheduler_exit_code(r), 0);
    r.maintenance.reset();
    EXPECT_EQ(health::scheduler_exit_code(r), 1);
}

TEST(DrainDecision, ResumesOnlyWhatItDrained) {
    const auto ours = node("n1", "IDLE+DRAIN", "trainrig:gpu.ecc 3 errors");
    EXPECT_EQ(decide(result(kHealthy), ours, {ours}).kind, ActionKind::kResume);
    const auto theirs = node("n1", "IDLE+DRAIN", "replacing PSU (ops)");
    EXPECT_EQ(decide(result(kHealthy), theirs, {theirs}).kind, ActionKind::kNothing);
    EXPECT_EQ(decide(result(kHealthy), node("n1"), {node("n1")}).kind, ActionKind::kNothing);
}

TEST(DrainDecision, NeverReplacesAnOperatorsReason) {
    const auto theirs = node("n1", "IDLE+DRAIN", "replacing PSU (ops)");
    const auto a = decide(result(kUnhealthy), theirs, {theirs});
    EXPECT_EQ(a.kind, ActionKind::kLeave);
    EXPECT_NE(a.message.find("replacing PSU"), std::string::npos);
    const auto down = node("n1", "DOWN+NOT_RESPONDING", "Not responding");
    EXPECT_EQ(decide(result(kUnhealthy), down, {down}).kind, ActionKind::kLeave);
}

TEST(DrainDecision, KeepsItsOwnReasonOrRewordsItForAnotherCheck) {
    const auto ours = node("n1", "IDLE+DRAIN", "trainrig:gpu.ecc 2 errors");
    EXPECT_EQ(decide(result(kUnhealthy), ours, {ours}).kind, ActionKind::kKeep);
    const auto other = decide(result(kUnhealthy, "kmsg.xid", "Xid 79"), ours, {ours});
    EXPECT_EQ(other.kind, ActionKind::kDrain);
    EXPECT_EQ(other.reason, "trainrig:kmsg.xid Xid 79");
}

TEST(DrainDecision, UnknownChangesNothing) {
    const auto ours = node("n1", "IDLE+DRAIN", "trainrig:gpu.ecc 2 errors");
    EXPECT_EQ(decide(result(kUnknown), ours, {ours}).kind, ActionKind::kNothing);
    EXPECT_EQ(decide(result(kUnknown), node("n1"), {node("n1")}).kind, ActionKind::kNothing);
}

TEST(DrainDecision, CircuitBreakerStopsAtTheShare) {
    std::vector<SlurmNode> all;
    for (int i = 1; i <= 4; ++i) all.push_back(node("n" + std::to_string(i)));
    // Someone else's drains and other partitions' nodes do not count.
    all.push_back(node("x1", "IDLE+DRAIN", "trainrig:gpu.ecc", {"cpu"}));
    all.push_back(node("x2", "IDLE+DRAIN", "trainrig:gpu.ecc", {"cpu"}));
    all[1] = node("n2", "IDLE+DRAIN", "trainrig:kmsg.xid Xid 79");
    all[2] = node("n3", "IDLE+DRAIN", "ops: bad fan");
    EXPECT_EQ(decide(result(kUnhealthy), all[0], all).kind, ActionKind::kDrain);  // 1 of 4
    all[2] = node("n3", "IDLE+DRAIN", "trainrig:gpu.nvlink link 3 down");
    const auto refused = decide(result(kUnhealthy), all[0], all);  // 2 of 4 = 50 %
    EXPECT_EQ(refused.kind, ActionKind::kRefuse);
    EXPECT_NE(refused.message.find("2 of the 4 nodes"), std::string::npos);
    EXPECT_EQ(decide(result(kUnhealthy), all[0], all, {.max_share = 0.75}).kind,
              ActionKind::kDrain);
    // A node already drained by trainrig is re-worded, never refused.
    const auto ours = node("n1", "IDLE+DRAIN", "trainrig:gpu.temperature 95 C");
    all[0] = ours;
    EXPECT_EQ(decide(result(kUnhealthy), ours, all).kind, ActionKind::kDrain);
    // One node alone may be drained.
    EXPECT_EQ(decide(result(kUnhealthy), node("n9"), {node("n9")}).kind, ActionKind::kDrain);
}

// A dry run changes nothing, so its messages say what would be done; a healthy node needs no
// message beyond the health line.
TEST(DrainDecision, ADryRunSaysWhatItWouldDo) {
    const auto self = node("node07");
    const auto drain = decide(result(kUnhealthy), self, {self}, {.dry_run = true});
    EXPECT_EQ(drain.kind, ActionKind::kDrain);
    EXPECT_TRUE(drain.message.starts_with("would drain node07: trainrig:gpu.ecc")) << drain.message;
    EXPECT_TRUE(decide(result(kUnhealthy), self, {self}).message.starts_with("draining node07"));
    const auto ours = node("node07", "IDLE+DRAIN", "trainrig:gpu.ecc 3 errors");
    const auto resume = decide(result(kHealthy), ours, {ours}, {.dry_run = true});
    EXPECT_EQ(resume.kind, ActionKind::kResume);
    EXPECT_NE(resume.message.find("would resume it"), std::string::npos) << resume.message;
    EXPECT_EQ(resume.message.find("resuming"), std::string::npos) << resume.message;
    EXPECT_NE(decide(result(kHealthy), ours, {ours}).message.find("resuming it"),
              std::string::npos);
    EXPECT_EQ(decide(result(kHealthy), self, {self}).message, "");
}

// npd and slurm healthcheck word one machine's count the same way, from one function.
TEST(HealthChecksText, CountsWhatWasJudgedAndWhatDidNotApply) {
    health::HealthResult r = result(kHealthy);
    r.checks = 18;
    r.not_applicable = 16;
    EXPECT_EQ(health::checks_text(r), "2 checks passed, 16 not applicable");
    r.not_applicable = 0;
    EXPECT_EQ(health::checks_text(r), "18 checks passed");
    r = result(kUnhealthy);
    r.checks = 18;
    r.not_applicable = 17;
    EXPECT_EQ(health::checks_text(r), "1 check run, 17 not applicable");
}

}  // namespace
}  // namespace trainrig::slurm

// launch: the environment file tune writes, the rank from each launcher's variables, and the
// binding for 1, 2, 4 and 8 GPUs over one and two NUMA nodes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/env_file.h"
#include "launch/binding.h"

namespace trainrig::launch {
namespace {

// n GPUs, the first half on node 0 (CPUs 0-15), the rest on node 1 (CPUs 16-31), or all on
// node 0 with one node.
std::vector<GpuPlace> machine(int n, int nodes) {
    std::vector<GpuPlace> out;
    for (int i = 0; i < n; ++i) {
        const int node = nodes == 2 && i >= n / 2 && n > 1 ? 1 : 0;
        out.push_back(
            {i, fmt::format("0000:{:02x}:00.0", 0x10 + i), node, node == 0 ? "0-15" : "16-31"});
    }
    return out;
}

TEST(LaunchEnvFile, ReadsWhatTuneWrites) {
    auto ops = parse_env_file(
        "# comment\n\nunset NCCL_P2P_DISABLE\nTORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
        "NCCL_SOCKET_IFNAME='eth 0'\nexport NCCL_DEBUG=WARN\nX='it'\\''s'\n",
        "nccl.env");
    ASSERT_TRUE(ops.ok()) << ops.status().message();
    ASSERT_EQ(ops->size(), 5u);
    EXPECT_TRUE((*ops)[0].unset);
    EXPECT_EQ((*ops)[1].value, "1");
    EXPECT_EQ((*ops)[2].value, "eth 0");
    EXPECT_EQ((*ops)[3].name, "NCCL_DEBUG");
    EXPECT_EQ((*ops)[4].value, "it's");
    EXPECT_EQ(parse_env_file("A=$(reboot)\n", "f").status().message(),
              "f line 1: the value needs a shell (unquoted spaces, $, `, \\ in quotes or ;): "
              "'A=$(reboot)'");
    EXPECT_FALSE(parse_env_file("A=\"$HOME\"\n", "f").ok());
    EXPECT_FALSE(parse_env_file("A='open\n", "f").ok());
    EXPECT_FALSE(parse_env_file("just words\n", "f").ok());
    EXPECT_FALSE(parse_env_file("1A=x\n", "f").ok());
}

// docs/formats.md: spaces around the name, the '=' and the value are ignored; a comment after
// a value is refused, not read differently than bash would read it.
TEST(EnvFile, SpacesAroundTheEqualsSignAreIgnored) {
    auto ops = parse_env_file("NCCL_SOCKET_IFNAME = \"ens1f0\"\n  CUDA_X =1 \n", "job.env");
    ASSERT_TRUE(ops.ok()) << ops.status().message();
    ASSERT_EQ(ops->size(), 2u);
    EXPECT_EQ((*ops)[0].name, "NCCL_SOCKET_IFNAME");
    EXPECT_EQ((*ops)[0].value, "ens1f0");
    EXPECT_EQ((*ops)[1].value, "1");
    EXPECT_FALSE(parse_env_file("NCCL_DEBUG=INFO # verbose\n", "f").ok());
}

TEST(EnvFile, DoubleQuotesExportAndUnsetApplyInOrder) {
    auto ops = parse_env_file(
        "# comment\nexport NCCL_P2P_DISABLE=1\nNCCL_DEBUG=\"WARN\"\nA=1\nunset A\n\n", "e.env");
    ASSERT_TRUE(ops.ok()) << ops.status().message();
    auto env = apply_env_ops(*ops, {{"A", "0"}, {"KEEP", "k"}});
    EXPECT_EQ(env, (std::map<std::string, std::string>{
                       {"KEEP", "k"}, {"NCCL_DEBUG", "WARN"}, {"NCCL_P2P_DISABLE", "1"}}));
    auto bad = parse_env_file("OK=1\nthis line is wrong\n", "e.env");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("e.env line 2"), std::string::npos);
}

TEST(LaunchRank, EachLaunchersVariable) {
    EXPECT_EQ(rank_from_env({{"LOCAL_RANK", "3"}})->local_rank, 3);
    EXPECT_EQ(rank_from_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "5"}})->from,
              "OMPI_COMM_WORLD_LOCAL_RANK");
    EXPECT_EQ(rank_from_env({{"SLURM_LOCALID", "1"}})->local_rank, 1);
    // torchrun under srun sets both: torchrun's rank is the process's own.
    EXPECT_EQ(rank_from_env({{"SLURM_LOCALID", "0"}, {"LOCAL_RANK", "6"}})->local_rank, 6);
    EXPECT_FALSE(rank_from_env({})->local_rank);
    EXPECT_FALSE(rank_from_env({{"LOCAL_RANK", "x"}}).ok());
}

TEST(LaunchBinding, EveryRankGetsItsGpusNode) {
    for (int nodes : {1, 2})
        for (int n : {1, 2, 4, 8}) {
            const auto places = machine(n, nodes);
            for (int r = 0; r < n; ++r) {
                auto b = choose_binding(places, {}, NumaMode::kAuto, {r, "LOCAL_RANK"});
                ASSERT_TRUE(b.ok()) << b.status().message();
                EXPECT_EQ(b->gpu, r);
                EXPECT_EQ(b->node, places[static_cast<size_t>(r)].node) << n << " GPUs, rank " << r;
                EXPECT_EQ(b->cpus, b->node == 0 ? "0-15" : "16-31");
                EXPECT_EQ(b->gpus.size(), static_cast<size_t>(n));
            }
        }
}

TEST(LaunchBinding, SelectionSingleProcessAndErrors) {
    const auto places = machine(8, 2);
    auto b = choose_binding(places, {4, 5, 6, 7}, NumaMode::kAuto, {1, "SLURM_LOCALID"});
    EXPECT_EQ(b->gpu, 5);
    EXPECT_EQ(b->node, 1);
    b = choose_binding(places, {6}, NumaMode::kAuto, {});
    EXPECT_EQ(b->gpu, 6);  // one GPU, one process: bound to it
    b = choose_binding(places, {}, NumaMode::kAuto, {});
    EXPECT_EQ(b->node, -1);  // one process for eight GPUs: left alone, said why
    EXPECT_NE(b->why.find("not bound"), std::string::npos);
    b = choose_binding(places, {}, NumaMode::kNone, {2, "LOCAL_RANK"});
    EXPECT_EQ(b->node, -1);
    EXPECT_EQ(choose_binding(places, {}, NumaMode::kAuto, {8, "LOCAL_RANK"}).status().message(),
              "LOCAL_RANK=8 but the job has 8 GPU(s); start one rank per GPU");
    EXPECT_EQ(choose_binding(places, {9}, NumaMode::kAuto, {}).status().message(),
              "--gpus names GPU 9, but this machine has 8 GPUs (0-7)");
    EXPECT_EQ(choose_binding({}, {0}, NumaMode::kAuto, {}).status().message(),
              "--gpus names GPU 0, but this machine shows no NVIDIA GPU");
    EXPECT_EQ(choose_binding({places[0]}, {1}, NumaMode::kAuto, {}).status().message(),
              "--gpus names GPU 1, but this machine has one GPU (0)");
    auto unknown = places;
    unknown[3].node = -1;
    b = choose_binding(unknown, {}, NumaMode::kAuto, {3, "LOCAL_RANK"});
    EXPECT_EQ(b->node, -1);
    EXPECT_NE(b->why.find("no NUMA node"), std::string::npos);
}

}  // namespace
}  // namespace trainrig::launch

// Which node-local rank a process is and which GPU it takes (core/local_rank.h): the rule the
// NCCL benchmark, the trainer and `launch` share, with the launchers' variables in their order.
#include "core/local_rank.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace trainrig {
namespace {

Result<LocalRank> from(const std::map<std::string, std::string>& env) {
    return local_rank_from_env([&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

TEST(LocalRank, EachLaunchersVariable) {
    for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                             "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
        auto r = from({{name, "3"}});
        ASSERT_TRUE(r.ok()) << name;
        EXPECT_EQ(r->local_rank, 3) << name;
        EXPECT_EQ(r->from, name);
    }
    EXPECT_FALSE(from({})->local_rank);
}

TEST(LocalRank, TheLaunchersOwnVariableBeatsSlurms) {
    // srun alone: every rank of a node has its own SLURM_LOCALID, the benchmark's old blind spot.
    EXPECT_EQ(from({{"SLURM_LOCALID", "5"}, {"PMI_RANK", "13"}})->local_rank, 5);
    // torchrun under srun: one agent per node, every worker inherits its SLURM_LOCALID=0.
    EXPECT_EQ(from({{"SLURM_LOCALID", "0"}, {"LOCAL_RANK", "6"}})->local_rank, 6);
    // mpirun inside an sbatch script: the batch step's SLURM_LOCALID=0 reaches every rank.
    EXPECT_EQ(from({{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}})->from,
              "OMPI_COMM_WORLD_LOCAL_RANK");
    EXPECT_EQ(from({{"SLURM_LOCALID", "0"}, {"MPI_LOCALRANKID", "4"}})->local_rank, 4);
    EXPECT_EQ(from({{"SLURM_LOCALID", "0"}, {"MV2_COMM_WORLD_LOCAL_RANK", "7"}})->local_rank, 7);
    // torchrun started by mpirun: torchrun is the inner launcher.
    EXPECT_EQ(from({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"LOCAL_RANK", "3"}})->local_rank, 3);
}

TEST(LocalRank, EmptyIsUnsetAndGarbageIsAnError) {
    EXPECT_EQ(from({{"LOCAL_RANK", ""}, {"SLURM_LOCALID", "2"}})->local_rank, 2);
    for (const char* bad : {"x", "-1", "1.5", "100001"}) {
        auto r = from({{"OMPI_COMM_WORLD_LOCAL_RANK", bad}, {"SLURM_LOCALID", "0"}});
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.status().message(),
                  std::string("OMPI_COMM_WORLD_LOCAL_RANK=") + bad + " is not a local rank");
    }
}

Result<WorldRank> world(const std::map<std::string, std::string>& env) {
    return world_rank_from_env([&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

TEST(WorldRank, EachLaunchersVariableInOrder) {
    for (const char* name :
         {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        auto r = world({{name, "42"}});
        ASSERT_TRUE(r.ok()) << name;
        EXPECT_EQ(r->rank, 42) << name;
        EXPECT_EQ(r->from, name);
    }
    EXPECT_FALSE(world({})->rank);
    // mpirun inside an sbatch script: the batch step's SLURM_PROCID=0 reaches every rank.
    EXPECT_EQ(world({{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "9"}})->rank, 9);
    EXPECT_EQ(world({{"SLURM_PROCID", "0"}, {"PMIX_RANK", "3"}})->from, "PMIX_RANK");
    auto bad = world({{"PMI_RANK", "-2"}});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().message(), "PMI_RANK=-2 is not a rank");
}

TEST(LocalDevice, OneGpuPerRankOrPerTaskVisibility) {
    for (int r = 0; r < 8; ++r) EXPECT_EQ(local_device(r, 8), r);
    // Slurm --gpus-per-task=1: each rank sees only its own GPU, as device 0.
    for (int r = 0; r < 8; ++r) EXPECT_EQ(local_device(r, 1), 0);
    // --gpus-per-task=2: rank 3 sees its two and takes the second.
    EXPECT_EQ(local_device(3, 2), 1);
    EXPECT_EQ(local_device(0, 0), 0);
    EXPECT_EQ(local_device(-1, 4), 0);
}

}  // namespace
}  // namespace trainrig

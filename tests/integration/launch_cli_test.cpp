// `trainrig launch` as a job script runs it: bindings on the HGX tree for torchrun- and
// mpirun-style ranks, the launcher command lines, exit status and signals passed through, and
// the environment file applied without a shell.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "run_binary.h"

namespace trainrig::test {
namespace {

const std::string kHgx = " --root " + fixture("hgx-8xh100") + " --print --no-env-file";

TEST(LaunchCli, TorchrunAndMpirunRanksPickTheirGpu) {
    auto r = run_trainrig("launch" + kHgx + " -- python train.py", "LOCAL_RANK=5");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("rank 5 (LOCAL_RANK) -> GPU 5 (0000:9b:00.0) -> NUMA node 1, CPUs 56-111"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
    EXPECT_NE(r.out.find("exec: python train.py"), std::string::npos);
    r = run_trainrig("launch" + kHgx + " --gpus 0,1,2,3 -- python train.py",
                     "OMPI_COMM_WORLD_LOCAL_RANK=2");
    EXPECT_NE(r.out.find("GPU 2 (0000:3a:00.0) -> NUMA node 0, CPUs 0-55"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("CUDA_VISIBLE_DEVICES=0,1,2,3"), std::string::npos);
}

TEST(LaunchCli, LauncherCommandLines) {
    auto r = run_trainrig("launch" + kHgx + " --torchrun -- python train.py --lr 3e-4");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("exec: torchrun --nproc-per-node 8 --no-python "), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(" launch --gpus 0,1,2,3,4,5,6,7 --numa auto --no-env-file -- python "
                         "train.py --lr 3e-4"),
              std::string::npos)
        << r.out;
    r = run_trainrig("launch" + kHgx + " --srun --gpus 0,1 -- ./train");
    EXPECT_NE(r.out.find("exec: srun --ntasks-per-node 2 "), std::string::npos) << r.out;
    r = run_trainrig("launch" + kHgx + " --srun --mpirun -- ./train");
    EXPECT_EQ(r.rc, 2);
}

TEST(LaunchCli, ExitStatusSignalsAndEnvironmentPassThrough) {
    auto r = run_trainrig("launch --no-env-file --numa none -- sh -c 'exit 7'");
    EXPECT_EQ(r.rc, 7) << r.err;
    r = run_trainrig("launch --no-env-file --numa none -- sh -c 'kill -TERM $$'");
    EXPECT_EQ(r.rc, 128 + 15);  // the shell reports the job killed by SIGTERM
    const auto env =
        std::filesystem::temp_directory_path() / ("launch-" + std::to_string(::getpid()) + ".env");
    std::ofstream(env) << "unset NCCL_P2P_DISABLE\nNCCL_DEBUG='WARN'\n";
    r = run_trainrig("launch --numa none --env-file " + env.string() +
                         " -- sh -c 'echo \"[$NCCL_DEBUG][${NCCL_P2P_DISABLE-unset}]\"'",
                     "NCCL_P2P_DISABLE=1");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "[WARN][unset]\n");
    std::filesystem::remove(env);
}

TEST(LaunchCli, BadInputIsOneSentence) {
    for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
             {"launch --no-env-file", "no command"},
             {"launch --root " + fixture("hgx-8xh100") + " -- x", "add --print"},
             {"launch" + kHgx + " --gpus 9 -- x", "--gpus names GPU 9"},
             {"launch --no-env-file --numa none -- /nonexistent/cmd", "/nonexistent/cmd"},
         }) {
        auto r =
            run_trainrig(args, "env -u LOCAL_RANK -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID");
        EXPECT_EQ(r.rc, 2) << args << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
    }
}

}  // namespace
}  // namespace trainrig::test

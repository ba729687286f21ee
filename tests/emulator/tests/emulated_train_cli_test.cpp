// `trainrig train --backend cuda` as a user runs it, on the emulated device (docs/testing.md, "The
// emulated GPU"): the real CUDA trainer, its kernels and cuBLASLt calls learn the pattern of real
// token shards, checkpoint and resume bit for bit; two MPI ranks exchanging gradients through
// NCCL equal one rank with twice the batch; `--find-batch` finds the device's memory limit.
#include <cmath>
#include <cstdlib>

#include "core/emulated_gpu.h"
#include "train_cli_fixture.h"

namespace trainrig::test {
namespace {

// Two emulated GPUs (one per MPI rank below) of 2 GB each.
const std::string kTwoGpus =
    "TRAINRIG_EMULATED_GPUS=0000:01:00.0,0000:41:00.0 TRAINRIG_EMULATED_GPU_MEMORY=2G ";

class EmulatedTrain : public TrainCliTest {
protected:
    void SetUp() override {
        TrainCliTest::SetUp();
        shape_ += " --backend cuda";
    }
    RunResult train(const std::string& extra) const { return run_trainrig(args(extra), kTwoGpus); }
};

TEST_F(EmulatedTrain, LearnsThePatternOnTheEmulatedGpu) {
    const std::string log = (dir_ / "log.jsonl").string();
    auto r = train("--steps 40 --warmup 5 --val-data " + val_ + " --log " + log + " --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json s = json::parse(r.out);
    EXPECT_EQ(s["backend"], "cuda");
    EXPECT_TRUE(is_emulated_gpu(s["device"].get<std::string>())) << s["device"];
    EXPECT_EQ(s["stop"], "completed");
    EXPECT_GT(s["peak_memory_bytes"].get<uint64_t>(), 0u);
    // ln(128) = 4.85 at the start; the pattern is learnable far below it.
    EXPECT_GT(s["first_val_loss"].get<double>(), 4.5);
    EXPECT_LT(s["last_val_loss"].get<double>(), 3.5);
    // An emulated device has no peak to hold model FLOPs against.
    EXPECT_TRUE(s["mfu"].is_null());
    EXPECT_EQ(log_lines(log).size(), 40u);
}

TEST_F(EmulatedTrain, ResumeIsBitIdenticalToAStraightRun) { expect_exact_resume(); }

TEST_F(EmulatedTrain, LlamaBlocksResumeBitIdenticallyToo) {
    shape_ = "--model llama-tiny --vocab 128 --backend cuda";
    expect_exact_resume();
}

// Data parallel over NCCL across two processes (the emulator's communicators meet through the
// unique id rank 0 broadcasts over MPI, as NCCL's do): two ranks of batch B are one rank of batch
// 2B up to fp32 summation order, and both ranks end with bit-identical weights.
TEST_F(EmulatedTrain, TwoMpiRanksOverNcclEqualOneRankWithTheDoubledBatch) {
    // bf16 activations on the device: the two runs round at different points, so the losses
    // agree to 2e-3. AdamW moves every weight by about lr (3e-3) a step whatever the gradient's
    // size, so a gradient near zero that rounds the other way moves a weight by up to 2·lr; the
    // losses are the sharper check, and a missing all-reduce fails them.
    const auto [one, two] = expect_two_ranks_equal_one(
        4, 2e-3, 4 * 3e-3f, kTwoGpus, {"TRAINRIG_EMULATED_GPUS", "TRAINRIG_EMULATED_GPU_MEMORY"});
    // MPI carries the host's few numbers; the gradients go through the plugin's NCCL
    // communicator, which the unique id sent over MPI set up.
    EXPECT_EQ(two.value("communicator", json()), "mpi");
}

// The device probe on the emulated GPU: a larger device holds a larger micro-batch, and the
// sizes past the limit do not fit (cudaMalloc fails at the device's limit, or the peak leaves too
// little headroom).
TEST(EmulatedFindBatch, FindsTheEmulatedDevicesMemoryLimit) {
    const std::string probe =
        "train --find-batch --backend cuda --model tiny --seq 64 --max-batch 64 --probe-steps 1 "
        "--json";
    // About 3 and 8 sequences (2026-12-07), in about 30 s together.
    const std::string one_gpu = "TRAINRIG_EMULATED_GPUS=0000:01:00.0 TRAINRIG_EMULATED_GPU_MEMORY=";
    auto small = run_trainrig(probe, one_gpu + "128M");
    auto large = run_trainrig(probe, one_gpu + "160M");
    ASSERT_EQ(small.rc, 0) << small.err << small.out.substr(0, 2000);
    ASSERT_EQ(large.rc, 0) << large.err << large.out.substr(0, 2000);
    const json a = json::parse(small.out), b = json::parse(large.out);
    for (const json* doc : {&a, &b}) {
        EXPECT_EQ((*doc)["answer"], "found") << *doc;
        EXPECT_EQ((*doc)["capacity_source"], "free device memory");
        EXPECT_TRUE(is_emulated_gpu((*doc)["device"].get<std::string>())) << (*doc)["device"];
        bool over = false;
        for (const auto& s : (*doc)["sizes"]) over = over || s["verdict"] != "fits";
        EXPECT_TRUE(over) << "no size reached the limit: " << *doc;
    }
    ASSERT_TRUE(a["micro_batch"].is_number_integer());
    ASSERT_TRUE(b["micro_batch"].is_number_integer());
    EXPECT_GT(b["micro_batch"].get<int>(), a["micro_batch"].get<int>());
}

}  // namespace
}  // namespace trainrig::test

// The CUDA training backend against the CPU reference, through the plugin as `trainrig train
// --backend cuda` loads it: same weights and batches, four AdamW steps, judged by
// tests/support/backend_match.h (loss and grad norm every step, the first step's logits and
// per-tensor gradients, the final weights and updates). The same comparison runs in the unit
// tests on a CPU emulation of this path's bf16 rounding, which is where its limits were shown
// to pass a correct device and fail planted errors. Every head size the attention kernels are
// built for, T below, at and off the 64-query tile, and T = 1024. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backend_match.h"
#include "train/backend.h"
#include "train/device_plugin.h"

namespace trainrig::train {
namespace {

using testing::MatchCheck;
using testing::MatchShape;

class TrainCuda : public ::testing::TestWithParam<MatchShape> {
protected:
    void SetUp() override {
        // The build's plugin unless the environment names another (a bundle on a GPU machine).
        ::setenv("TRAINRIG_TRAIN_PLUGIN", TRAINRIG_TRAIN_CUDA_PLUGIN, 0);
        auto w = open_device_world(local_);
        if (!w.ok()) GTEST_SKIP() << w.status().message();
        world_ = std::move(w).value();
    }
    LocalCommunicator local_;
    std::shared_ptr<DeviceWorld> world_;
};

TEST_P(TrainCuda, MatchesTheCpuReference) {
    const MatchShape s = GetParam();
    OptimizerConfig opt;
    opt.lr = 1e-3;
    auto dev = make_device_backend(world_, testing::config_of(s), opt, s.B, s.T);
    ASSERT_TRUE(dev.ok()) << dev.status().message();
    auto cpu = make_cpu_backend(testing::config_of(s), opt);
    auto report = testing::match_backends(**dev, *cpu, s);
    ASSERT_TRUE(report.ok()) << report.status().message();
    for (const MatchCheck& c : report->failures())
        ADD_FAILURE() << c.name << ": " << c.error << " exceeds " << c.limit;
    // The margins land in the --gtest_output JSON that scripts/gpu-check.sh keeps: the worst
    // error over its limit per kind of check (below 1 passes).
    for (const char* kind :
         {"loss", "logits", "grad ", "k-bias", "grad-norm", "update", "tight update"})
        RecordProperty(std::string("worst_") + kind, std::to_string(report->worst_ratio(kind)));
}

// The smallest shape first: scripts/gpu-check.sh runs it under compute-sanitizer as
// TrainCuda/MatchesTheCpuReference/hs16_T64.
INSTANTIATE_TEST_SUITE_P(, TrainCuda, ::testing::ValuesIn(testing::device_match_shapes()),
                         [](const ::testing::TestParamInfo<MatchShape>& p) {
                             return testing::shape_name(p.param);
                         });

}  // namespace
}  // namespace trainrig::train

// The device-against-reference comparison (tests/support/backend_match.h) on a CPU emulation of
// the CUDA backend's bf16 arithmetic: a correct device path passes every check at every shape
// the GPU test runs, and planted errors fail it. Also shows why the K-bias slice of qkv_b is
// left out: compared whole, the final qkv_b of a correct device path would fail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend_match.h"
#include "bf16_device_backend.h"
#include "train/param_layout.h"

namespace trainrig::train::testing {
namespace {

OptimizerConfig adamw() {
    OptimizerConfig opt;
    opt.lr = 1e-3;
    return opt;
}

std::string describe(const MatchReport& r) {
    std::string s;
    for (const MatchCheck& c : r.checks)
        s += c.name + ": " + std::to_string(c.error) + " (limit " + std::to_string(c.limit) +
             (c.passed() ? ")\n" : ") FAILED\n");
    return s;
}

struct Ran {
    MatchReport report;
    CheckpointState device_end, reference_end;
};

Ran run(const MatchShape& s, DeviceFault fault) {
    auto device = make_bf16_device_backend(config_of(s), adamw(), fault);
    auto reference = make_cpu_backend(config_of(s), adamw());
    auto r = match_backends(*device, *reference, s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    Ran out;
    if (r.ok()) out.report = *r;
    EXPECT_TRUE(device->save_state(out.device_end).ok());
    EXPECT_TRUE(reference->save_state(out.reference_end).ok());
    return out;
}

TEST(Bf16Rounding, RoundsToNearestEven) {
    EXPECT_EQ(round_bf16(1.0f), 1.0f);
    // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: ties go to the even mantissa, 1.
    EXPECT_EQ(round_bf16(1.0f + 0x1p-8f), 1.0f);
    EXPECT_EQ(round_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
    EXPECT_EQ(round_bf16(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);
    EXPECT_EQ(round_bf16(-2.5f), -2.5f);
    EXPECT_TRUE(std::isinf(round_bf16(INFINITY)));
    EXPECT_TRUE(std::isnan(round_bf16(NAN)));
}

TEST(MatchLimits, UpdateLimitFollowsTheGradientLimit) {
    EXPECT_NEAR(update_limit(0.05), 0.357, 1e-3);
    EXPECT_LT(update_limit(0.01), update_limit(0.05));
    EXPECT_EQ(default_match_limits().updates, update_limit(default_match_limits().grads));
}

class DeviceEmulation : public ::testing::TestWithParam<MatchShape> {};

TEST_P(DeviceEmulation, CorrectDevicePathPasses) {
    const Ran ran = run(GetParam(), DeviceFault::kNone);
    const MatchReport& r = ran.report;
    EXPECT_TRUE(r.passed()) << describe(r);
    // Margins, for docs/gpu-check.md: the worst error over its limit per kind of check.
    for (const char* kind :
         {"loss", "logits", "grad ", "k-bias", "grad-norm", "update", "tight update"})
        RecordProperty(std::string("worst_") + kind, std::to_string(r.worst_ratio(kind)));

    // The finding behind leaving the K-bias slice out: compared whole, the final qkv_b of a
    // correct device path is far off the reference, because Adam turns the slice's rounding
    // residue into full steps.
    const ParamLayout layout(config_of(GetParam()));
    const TensorSlot& t = layout[Param::kQkvB];
    double diff = 0, ref = 0;
    for (size_t k = t.offset; k < t.offset + t.size; ++k) {
        const double d = ran.device_end.params[k], c = ran.reference_end.params[k];
        diff += (d - c) * (d - c);
        ref += c * c;
    }
    RecordProperty("whole_qkv_b_rel_l2", std::to_string(std::sqrt(diff / ref)));
    EXPECT_GT(std::sqrt(diff / ref), default_match_limits().updates);
}

TEST_P(DeviceEmulation, TransposedAttentionProjectionGradientFails) {
    const MatchReport r = run(GetParam(), DeviceFault::kTransposedAttnProjGrad).report;
    ASSERT_NE(r.find("grad attn_proj_w"), nullptr);
    EXPECT_FALSE(r.find("grad attn_proj_w")->passed()) << describe(r);
    // The end state alone would catch it too.
    EXPECT_FALSE(r.find("update attn_proj_w")->passed()) << describe(r);
}

// An optimizer defect leaves the first step's loss, logits and gradients as they were; the
// later steps and, most clearly, the updates show it.
TEST_P(DeviceEmulation, AdamWithoutBiasCorrectionFailsAfterTheFirstStep) {
    const MatchReport r = run(GetParam(), DeviceFault::kNoAdamBiasCorrection).report;
    EXPECT_TRUE(r.find("loss step 1")->passed());
    EXPECT_TRUE(r.find("logits step 1")->passed());
    EXPECT_LT(r.worst_ratio("grad "), 1.0) << describe(r);
    EXPECT_GT(r.worst_ratio("tight update"), 2.0) << describe(r);
}

std::string name_of(const ::testing::TestParamInfo<MatchShape>& p) { return shape_name(p.param); }

// T = 1024 takes seconds on a CPU: those shapes are the `slow` label's (tests/unit/CMakeLists.txt).
INSTANTIATE_TEST_SUITE_P(GpuShapes, DeviceEmulation, ::testing::ValuesIn(device_match_shapes()),
                         name_of);

}  // namespace
}  // namespace trainrig::train::testing

// The device-against-reference comparison (tests/support/backend_match.h) on a CPU emulation of
// the CUDA backend's bf16 arithmetic: a correct device path passes every check at every GPT-2
// shape the GPU test runs, and planted errors fail it. Also shows why the K-bias slice of qkv_b
// is left out: compared whole, the final qkv_b of a correct device path would fail. The
// emulation builds GPT-2 blocks only; for the Llama shapes the comparison runs the CPU reference
// against itself (every check passes) and against a RoPE of the wrong frequencies (caught by the
// updates while the losses agree).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
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
    // tests/support/match_limits.json holds the update limit worked out from the gradient one.
    EXPECT_DOUBLE_EQ(default_match_limits().updates, update_limit(default_match_limits().grads));
    EXPECT_EQ(default_match_limits().loss, 0.01);
    EXPECT_EQ(default_match_limits().bf16_spacing, 1.0 / 256);
}

TEST(MatchShapes, LlamaShapesAreValidAndEveryNameIsDistinct) {
    std::set<std::string> names;
    for (const auto* list : {&device_match_shapes(), &llama_match_shapes()})
        for (const MatchShape& s : *list) {
            EXPECT_TRUE(validate(config_of(s)).ok()) << shape_name(s);
            EXPECT_TRUE(names.insert(shape_name(s)).second) << shape_name(s);
        }
    std::vector<std::string> llama;
    for (const MatchShape& s : llama_match_shapes()) {
        const ModelConfig c = config_of(s);
        EXPECT_EQ(c.arch, Arch::kLlama);
        EXPECT_EQ(c.ffn % 8, 0) << "the CUDA backend needs the MLP width a multiple of 8";
        llama.push_back(shape_name(s));
    }
    EXPECT_EQ(llama, (std::vector<std::string>{"llama_hs32_G1_T64", "llama_hs64_G2_T200",
                                               "llama_hs128_G4_T1024", "llama_hs128_G8_T80"}));
}

// scripts/gpu_check/ names test shapes for its steps; a renamed shape would leave a step running
// no test.
TEST(MatchShapes, TheShapesTheGpuCheckRunsExist) {
    std::set<std::string> names;
    for (const auto* list : {&device_match_shapes(), &llama_match_shapes()})
        for (const MatchShape& s : *list) names.insert(shape_name(s));
    // The sanitizers' shapes on a GPU; the emulated device's train-test and sanitizer shapes.
    for (const auto& [file, count] : {std::pair{"steps.py", 2}, std::pair{"emulated.py", 4}}) {
        SCOPED_TRACE(file);
        std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/scripts/gpu_check/" + file);
        ASSERT_TRUE(in);
        std::stringstream text;
        text << in.rdbuf();
        const std::string key = "MatchesTheCpuReference/", all = text.str();
        int found = 0;
        for (size_t at = all.find(key); at != std::string::npos; at = all.find(key, at + 1)) {
            const size_t start = at + key.size(), end = all.find('"', start);
            EXPECT_TRUE(names.count(all.substr(start, end - start)))
                << all.substr(start, end - start);
            ++found;
        }
        EXPECT_EQ(found, count);
    }
}

// The Llama path of the comparison: no qkv_b, an lm_head, no position table.
TEST(LlamaMatch, TheReferenceAgainstItselfPassesEveryCheck) {
    const MatchShape s = llama_match_shapes().front();
    auto a = make_cpu_backend(config_of(s), adamw());
    auto b = make_cpu_backend(config_of(s), adamw());
    auto r = match_backends(*a, *b, s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->passed()) << describe(*r);
    EXPECT_LT(r->worst_ratio(), 1e-6) << describe(*r);
    EXPECT_NE(r->find("grad qkv_w"), nullptr);
    EXPECT_NE(r->find("tight update lm_head"), nullptr);
    EXPECT_EQ(r->find("grad wpe"), nullptr) << "an empty tensor is no check";
    EXPECT_EQ(r->worst_ratio("k-bias"), 0) << "no biases, no K-bias check";
    EXPECT_NE(r->find("update attn_proj_w"), nullptr) << "not taken for the absent qkv_b";
}

// RoPE at a base of 10³⁰ instead of 10⁴ leaves all but the first rotation frequency near zero:
// nearly no rotation, as with a skipped RoPE. The loss, the gradient norm and even the relative
// L2 of each gradient stay within their limits; the updates of qkv_w, which follow the signs of
// its gradient's elements, do not.
TEST(LlamaMatch, AWrongRopeIsCaughtByTheUpdates) {
    const MatchShape s = llama_match_shapes().front();
    ModelConfig wrong = config_of(s);
    wrong.rope_theta = 1e30;
    auto device = make_cpu_backend(wrong, adamw());
    auto reference = make_cpu_backend(config_of(s), adamw());
    auto r = match_backends(*device, *reference, s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_LT(r->worst_ratio("loss"), 1.0) << describe(*r);
    EXPECT_LT(r->worst_ratio("grad-norm"), 1.0) << describe(*r);
    EXPECT_FALSE(r->find("update qkv_w")->passed()) << describe(*r);
    EXPECT_TRUE(r->find("update attn_proj_w")->passed()) << describe(*r);
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

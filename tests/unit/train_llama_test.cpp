// The Llama family's plumbing around the CPU blocks: one model definition for plan and train
// (parameter counts agree for every catalog model and for config.json files), the rotary
// angles with Llama 3.1's rescaling, the shape's JSON and digest, and the safetensors reader's
// rules. The blocks' gradients are in train_model_test.cpp; their agreement with an independent
// PyTorch Llama in tests/reference/llama_vs_pytorch.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/fnv1a.h"
#include "plan/hf_config.h"
#include "plan/model_catalog.h"
#include "temp_dir_test.h"
#include "train/hf_weights.h"
#include "train/model_spec_bridge.h"
#include "train/param_layout.h"
#include "train/rope_table.h"
#include "train/safetensors.h"

namespace trainrig::train {
namespace {

TEST(TrainLlama, PlanAndTrainCountTheSameParametersForEveryCatalogModel) {
    for (const plan::ModelSpec& spec : plan::model_catalog()) {
        auto c = config_from_spec(spec);
        ASSERT_TRUE(c.ok()) << spec.id << ": " << c.status().message();
        const ParamLayout layout(*c);
        EXPECT_EQ(layout.model_params(), static_cast<size_t>(plan::count_params(spec).total))
            << spec.id;
        // And both equal what the model's authors publish.
        if (spec.published_params) {
            EXPECT_EQ(layout.model_params(), static_cast<size_t>(spec.published_params)) << spec.id;
        }
        // The shape round-trips through plan's view of it.
        EXPECT_EQ(plan::count_params(model_spec_of(*c)).total, plan::count_params(spec).total)
            << spec.id;
    }
}

TEST(TrainLlama, Llama3EightBHasTheShapesOfItsConfig) {
    auto c = find_train_model("llama3-8b");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->arch, Arch::kLlama);
    EXPECT_EQ(c->kv_heads, 8);
    EXPECT_EQ(c->qkv_width(), 4096 + 2 * 1024);
    EXPECT_EQ(c->rope_theta, 500000);
    EXPECT_FALSE(c->tied);
    const ParamLayout layout(*c);
    EXPECT_EQ(layout.model_params(), 8'030'261'248u);
    EXPECT_EQ(layout[Param::kWpe].size, 0u);
    EXPECT_EQ(layout[Param::kFcW].size, 32u * 2 * 14336 * 4096);
    EXPECT_EQ(layout[Param::kLmHead].size, 128256u * 4096);  // 128256 is a multiple of 128
    EXPECT_EQ(layout.classifier(), Param::kLmHead);
    auto tiny = find_train_model("llama-tiny");
    ASSERT_TRUE(tiny.ok());
    EXPECT_TRUE(validate(*tiny).ok());
    auto unknown = find_train_model("llama5");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.status().next_step().find("llama3-8b"), std::string::npos);
}

TEST(TrainLlama, AConfigJsonBuildsTheModelPlanPlans) {
    const std::string text = R"({"model_type": "llama", "hidden_size": 2048,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
        "num_hidden_layers": 16, "vocab_size": 128256, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": true,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}})";
    auto spec = plan::model_from_hf_config(text, "llama-3.2-1b/config.json");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto c = config_from_spec(*spec);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_TRUE(c->tied);
    EXPECT_EQ(c->rope_scaling.factor, 32);
    EXPECT_EQ(c->rope_scaling.original_max_positions, 8192);
    // Llama 3.2 1B: 1,235,814,400 parameters (tied), as its model card's safetensors count.
    EXPECT_EQ(ParamLayout(*c).model_params(), 1'235'814'400u);
    EXPECT_EQ(ParamLayout(*c).model_params(), static_cast<size_t>(plan::count_params(*spec).total));

    // What train cannot build is one sentence, not a wrong model.
    auto odd = plan::model_from_hf_config(
        R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 32,
            "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100})",
        "odd.json");
    ASSERT_TRUE(odd.ok()) << odd.status().message();
    auto refused = config_from_spec(*odd);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("head_dim 32"), std::string::npos);
    auto scaled = plan::model_from_hf_config(
        R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
            "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})",
        "yarn.json");
    ASSERT_FALSE(scaled.ok());
    EXPECT_NE(scaled.status().message().find("\"yarn\" is not supported"), std::string::npos);
}

TEST(TrainLlama, RotaryFrequenciesFollowLlama31sRescaling) {
    ModelConfig c = *find_train_model("llama3.1-8b");
    const std::vector<double> scaled = rope_inv_freq(c);
    c.rope_scaling = {};
    const std::vector<double> plain = rope_inv_freq(c);
    ASSERT_EQ(plain.size(), 64u);
    EXPECT_DOUBLE_EQ(plain[0], 1.0);
    EXPECT_NEAR(plain[1], std::pow(500000.0, -2.0 / 128), 1e-15);
    int kept = 0, divided = 0, blended = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
        const double wavelen = 2 * std::numbers::pi / plain[i];
        if (wavelen < 8192.0 / 4) {
            EXPECT_EQ(scaled[i], plain[i]) << i;
            ++kept;
        } else if (wavelen > 8192.0) {
            EXPECT_DOUBLE_EQ(scaled[i], plain[i] / 8) << i;
            ++divided;
        } else {
            EXPECT_LT(scaled[i], plain[i]) << i;
            EXPECT_GT(scaled[i], plain[i] / 8) << i;
            ++blended;
        }
    }
    EXPECT_GT(kept, 0);
    EXPECT_GT(divided, 0);
    EXPECT_GT(blended, 0);
    std::vector<float> cos, sin;
    rope_table(c, 3, cos, sin);
    ASSERT_EQ(cos.size(), 3u * 64);
    EXPECT_EQ(cos[0], 1.0f);  // position 0 does not turn
    EXPECT_EQ(sin[5], 0.0f);
    EXPECT_FLOAT_EQ(cos[64 + 0], static_cast<float>(std::cos(1.0)));
}

TEST(TrainLlama, TheShapeRoundTripsThroughJsonAndGpt2KeepsItsDigest) {
    ModelConfig c = *find_train_model("llama3.1-8b");
    auto back = model_config_from_json(model_config_json(c), "test");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, c);
    ModelConfig other = c;
    other.kv_heads = 32;
    EXPECT_NE(config_hash(other), config_hash(c));
    other = c;
    other.rope_scaling = {};
    EXPECT_NE(config_hash(other), config_hash(c));
    // GPT-2 checkpoints written before the llama family existed still match their shape.
    const ModelConfig g = *preset_config("gpt2");
    EXPECT_EQ(config_hash(g),
              fmt::format("{:016x}", fnv1a64("gpt2;L=12;NH=12;C=768;maxT=1024;V=50257;Vp=50304")));
    nlohmann::json old = model_config_json(g);
    old.erase("arch");
    EXPECT_EQ(*model_config_from_json(old, "old"), g);
}

class SafetensorsTest : public test::TempDirTest {
protected:
    // Writes a file with one header and payload, byte for byte.
    std::string write(const std::string& header, const std::string& payload) {
        const std::string path = (dir_ / "w.safetensors").string();
        std::ofstream f(path, std::ios::binary);
        const uint64_t n = header.size();
        f.write(reinterpret_cast<const char*>(&n), 8);
        f << header << payload;
        return path;
    }
};

TEST_F(SafetensorsTest, ReadsEachDtypeAsFloat) {
    std::string payload(4 + 2 + 2 + 8, '\0');
    const float f32 = 1.5f;
    const uint16_t bf16 = 0x3fc0;  // 1.5
    const uint16_t f16 = 0x3e00;   // 1.5
    const double f64 = -2.25;
    std::memcpy(payload.data(), &f32, 4);
    std::memcpy(payload.data() + 4, &bf16, 2);
    std::memcpy(payload.data() + 6, &f16, 2);
    std::memcpy(payload.data() + 8, &f64, 8);
    const std::string path = write(
        R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("b":{"dtype":"BF16","shape":[1,1],"data_offsets":[4,6]},)"
        R"("c":{"dtype":"F16","shape":[1],"data_offsets":[6,8]},)"
        R"("d":{"dtype":"F64","shape":[],"data_offsets":[8,16]},"__metadata__":{"format":"pt"}})",
        payload);
    auto f = SafetensorsFile::open(path);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ(f->tensors().size(), 4u);
    for (auto [name, want] : {std::pair{"a", 1.5f}, std::pair{"b", 1.5f}, std::pair{"c", 1.5f},
                              std::pair{"d", -2.25f}}) {
        float got = 0;
        ASSERT_TRUE(f->read(name, std::span<float>(&got, 1)).ok()) << name;
        EXPECT_EQ(got, want) << name;
    }
}

TEST_F(SafetensorsTest, EveryBrokenRuleIsNamed) {
    const std::string four(4, '\0');
    for (auto [header, payload, words] : {
             std::tuple{std::string("{"), four, "not a JSON object"},
             std::tuple{std::string(R"({"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}})"),
                        four, "not F32"},
             std::tuple{std::string(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})"),
                        four, "holds 4 bytes for 2 elements"},
             std::tuple{std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})"),
                        four, "outside the 4 data bytes"},
             std::tuple{std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                    R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]}})"),
                        four, "overlap"},
         }) {
        auto f = SafetensorsFile::open(write(header, payload));
        ASSERT_FALSE(f.ok()) << header;
        EXPECT_NE(f.status().message().find(words), std::string::npos) << f.status().message();
    }
    // A header length beyond the file.
    const std::string path = (dir_ / "short.safetensors").string();
    std::ofstream(path, std::ios::binary) << std::string("\xff\xff\x00\x00\x00\x00\x00\x00", 8);
    auto f = SafetensorsFile::open(path);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("the header claims"), std::string::npos);
}

TEST_F(SafetensorsTest, AWrongOrMissingTensorIsNamedNotLoaded) {
    ModelConfig c = *find_train_model("llama-tiny");
    c.vocab = 3;
    c.padded_vocab = pad_vocab(3);
    c.layers = 1;
    // Only the embedding, transposed: its shape is refused before anything else is read.
    std::string payload(3 * 64 * 4, '\0');
    const std::string path = write(
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[64,3],"data_offsets":[0,768]}})",
        payload);
    auto w = read_hf_weights(path, c);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("has shape [64, 3], the model expects [3, 64]"),
              std::string::npos)
        << w.status().message();
    const std::string right = write(
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[3,64],"data_offsets":[0,768]}})",
        payload);
    w = read_hf_weights(right, c);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("has no tensor model.layers.0.input_layernorm.weight"),
              std::string::npos)
        << w.status().message();
    // GPT-2 checkpoints are not read by --init-from.
    EXPECT_EQ(read_hf_weights(right, *preset_config("tiny")).status().code(), Errc::kUnsupported);
}

}  // namespace
}  // namespace trainrig::train

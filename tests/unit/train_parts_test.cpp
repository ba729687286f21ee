// The parts of `trainrig train` around the model: shapes and parameter counts, the schedule,
// AdamW, checkpoints on disk, batches, and the step log.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>

#include "temp_dir_test.h"
#include "train/batch_source.h"
#include "train/checkpoint.h"
#include "train/optimizer.h"
#include "train/param_layout.h"
#include "train/step_record.h"

namespace trainrig::train {
namespace {

namespace fs = std::filesystem;

TEST(TrainShapes, Gpt2SizesMatchThePublishedCounts) {
    // GPT-2 124M with the vocabulary padded to 50304: 124,475,904 parameters (llm.c's
    // train_gpt2 prints this count); the unpadded model is the familiar 124,439,808.
    ParamLayout small(*preset_config("gpt2"));
    EXPECT_EQ(small.total(), 124475904u);
    ModelConfig unpadded = *preset_config("gpt2");
    unpadded.padded_vocab = 50257;  // only for counting
    EXPECT_EQ(ParamLayout(unpadded).total(), 124439808u);
    // The larger ones, unpadded, as Hugging Face reports them: 355M, 774M, 1558M.
    for (auto [name, params] :
         {std::pair{"gpt2-medium", 354823168u}, std::pair{"gpt2-large", 774030080u},
          std::pair{"gpt2-xl", 1557611200u}}) {
        ModelConfig c = *preset_config(name);
        c.padded_vocab = c.vocab;
        EXPECT_EQ(ParamLayout(c).total(), params) << name;
    }
    EXPECT_FALSE(preset_config("gpt3").ok());
}

TEST(TrainShapes, ValidationNamesTheField) {
    ModelConfig c = *preset_config("tiny");
    c.heads = 5;
    EXPECT_NE(validate(c).message().find("not a multiple of heads 5"), std::string::npos);
    c = *preset_config("tiny");
    c.padded_vocab = 100;
    EXPECT_NE(validate(c).message().find("padded vocabulary"), std::string::npos);
    EXPECT_EQ(pad_vocab(50257), 50304);
    EXPECT_EQ(pad_vocab(128), 128);
}

TEST(TrainShapes, ConfigHashFollowsTheShapeNotTheName) {
    ModelConfig a = *preset_config("tiny"), b = a;
    b.name = "other";
    EXPECT_EQ(config_hash(a), config_hash(b));
    b.channels = 128;
    EXPECT_NE(config_hash(a), config_hash(b));
    EXPECT_EQ(config_hash(a).size(), 16u);
}

TEST(TrainFlops, PalmCountForGpt2Small) {
    // 6N + 12·L·H·Q·T with N = 85M block matrices + 38.6M classifier, L=12, H=12, Q=64, T=1024.
    const ModelConfig c = *preset_config("gpt2");
    const double n = 12.0 * 12 * 768 * 768 + 50257.0 * 768;
    EXPECT_DOUBLE_EQ(train_flops_per_token(c, 1024), 6 * n + 12.0 * 12 * 12 * 64 * 1024);
}

TEST(TrainSchedule, WarmupThenCosineToTheFloor) {
    OptimizerConfig o;
    o.lr = 1.0;
    o.warmup = 4;
    o.final_lr_frac = 0.1;
    EXPECT_DOUBLE_EQ(learning_rate(o, 0, 14), 0.25);
    EXPECT_DOUBLE_EQ(learning_rate(o, 3, 14), 1.0);
    EXPECT_DOUBLE_EQ(learning_rate(o, 4, 14), 1.0);  // cosine starts at the peak
    EXPECT_NEAR(learning_rate(o, 9, 14) - 0.1, 0.5 * 0.9 * (1 + std::cos(std::numbers::pi * 5 / 9)),
                1e-12);
    EXPECT_DOUBLE_EQ(learning_rate(o, 13, 14), 0.1);  // the last step
    o.warmup = 0;
    EXPECT_DOUBLE_EQ(learning_rate(o, 0, 1), 1.0);
}

TEST(TrainOptimizer, AdamWMatchesTheFormulaAndDecaysOnlyMatrices) {
    ModelConfig c;
    c.layers = 1;
    c.heads = 1;
    c.channels = 2;
    c.max_seq = 1;
    c.vocab = 2;
    c.padded_vocab = 128;
    ParamLayout layout(c);
    OptimizerConfig o;
    o.weight_decay = 0.5;
    o.grad_clip = 0;
    AdamW adam(layout, o);
    std::vector<float> p(layout.total(), 1.0f), g(layout.total(), 0.1f);
    adam.step(p, g, 0.01, 1, global_norm(g));
    // Step 1: m̂ = g, v̂ = g², so the step is lr·(g/(|g| + eps) + wd·p) = 0.01·(≈1 + 0.5).
    const float decayed = p[layout[Param::kWte].offset];
    const float plain = p[layout[Param::kLn1W].offset];
    EXPECT_NEAR(decayed, 1.0f - 0.01f * (0.1f / (0.1f + 1e-8f) + 0.5f), 1e-6);
    EXPECT_NEAR(plain, 1.0f - 0.01f * (0.1f / (0.1f + 1e-8f)), 1e-6);
    EXPECT_NEAR(adam.m()[0], 0.1f * 0.1f, 1e-7);    // (1 - β1)·g
    EXPECT_NEAR(adam.v()[0], 0.05f * 0.01f, 1e-9);  // (1 - β2)·g²
}

TEST(TrainOptimizer, ClippingScalesToTheMaximumNorm) {
    ModelConfig c = *preset_config("tiny");
    c.vocab = 10;
    c.padded_vocab = 128;
    c.max_seq = 4;
    ParamLayout layout(c);
    OptimizerConfig o;
    o.grad_clip = 1.0;
    AdamW adam(layout, o);
    std::vector<float> p(layout.total(), 0.0f), g(layout.total(), 1.0f);
    const double norm = global_norm(g);
    EXPECT_NEAR(norm, std::sqrt(static_cast<double>(layout.total())), 1e-6);
    adam.step(p, g, 0.0, 1, norm);
    EXPECT_NEAR(global_norm(g), 1.0, 1e-5);  // grads are left clipped
}

TEST(TrainOptimizer, InvalidHyperParametersAreNamed) {
    OptimizerConfig o;
    o.final_lr_frac = 2;
    EXPECT_NE(validate(o).message().find("--final-lr-frac"), std::string::npos);
    o = {};
    o.beta2 = 1;
    EXPECT_NE(validate(o).message().find("beta2"), std::string::npos);
}

TEST(TrainBatches, WindowsSplitIntoInputsAndShiftedTargets) {
    const std::vector<uint32_t> rows = {1, 2, 3, 4, 5, 6, 7, 8};  // B=2, T=3
    Batch b;
    ASSERT_TRUE(split_windows(rows, 2, 3, 10, b).ok());
    EXPECT_EQ(b.inputs, (std::vector<uint32_t>{1, 2, 3, 5, 6, 7}));
    EXPECT_EQ(b.targets, (std::vector<uint32_t>{2, 3, 4, 6, 7, 8}));
    const Status s = split_windows(rows, 2, 3, 8, b);  // 8 is outside a vocabulary of 8
    EXPECT_NE(s.message().find("token id 8, outside the model's vocabulary of 8"),
              std::string::npos);
}

TEST(TrainStepLog, OneObjectWithEveryPhase) {
    StepRecord r;
    r.step = 3;
    r.loss = std::nan("");
    r.val_loss = 2.5;
    r.checkpoint = "ck/step-000000003";
    const auto j = nlohmann::json::parse(step_json(r));
    EXPECT_EQ(j["step"], 3);
    EXPECT_TRUE(j["loss"].is_null());  // JSON has no NaN
    EXPECT_TRUE(j["mfu"].is_null());
    for (const char* key : {"data_wait_s", "forward_s", "backward_s", "comm_s", "optimizer_s",
                            "checkpoint_s", "val_s", "step_s", "tokens_per_s", "lr"})
        EXPECT_TRUE(j[key].is_number()) << key;
    EXPECT_EQ(j["val_loss"], 2.5);
    EXPECT_EQ(j["checkpoint"], "ck/step-000000003");
}

class TrainCheckpointTest : public test::TempDirTest {
protected:
    CheckpointState state(int64_t step) const {
        CheckpointState s;
        s.step = step;
        s.model = model_;
        const size_t n = ParamLayout(model_).total();
        s.params.assign(n, static_cast<float>(step));
        s.adam_m.assign(n, 0.5f);
        s.adam_v.assign(n, 0.25f);
        s.loader_json = R"({"seed":1,"epoch":0,"position":8,"window":4,"samples":100})";
        s.rng_state = 77;
        s.seed = 1;
        return s;
    }
    std::string dir() const { return (dir_ / "ck").string(); }
    ModelConfig model_ = [] {
        ModelConfig c = *preset_config("tiny");
        c.vocab = 100;
        c.padded_vocab = 128;
        c.max_seq = 8;
        return c;
    }();
};

TEST_F(TrainCheckpointTest, RoundTripsEverything) {
    auto opened = CheckpointStore::open(dir(), 2);
    ASSERT_TRUE(opened.ok());
    CheckpointStore* store = &opened.value();
    ASSERT_TRUE(store->save(state(5)).ok());
    auto loaded = store->load_latest(model_, nullptr);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    ASSERT_TRUE(loaded->has_value());
    const CheckpointState& s = **loaded;
    EXPECT_EQ(s.step, 5);
    EXPECT_EQ(s.params, state(5).params);
    EXPECT_EQ(s.adam_v, state(5).adam_v);
    EXPECT_EQ(s.rng_state, 77u);
    EXPECT_EQ(nlohmann::json::parse(s.loader_json)["position"], 8);
    const auto j = nlohmann::json::parse(std::ifstream(dir() + "/step-000000005/state.json"));
    EXPECT_EQ(j["format"], "trainrig.train.checkpoint");
    EXPECT_EQ(j["tensors"].size(), static_cast<size_t>(kParamCount));
}

TEST_F(TrainCheckpointTest, KeepsTheNewestAndIgnoresUncommittedFolders) {
    auto opened = CheckpointStore::open(dir(), 2);
    ASSERT_TRUE(opened.ok());
    CheckpointStore* store = &opened.value();
    for (int64_t step : {1, 2, 3}) ASSERT_TRUE(store->save(state(step)).ok());
    EXPECT_EQ(store->committed_steps(), (std::vector<int64_t>{3, 2}));
    // A later folder without its marker (a crash between rename and marker) is not a checkpoint.
    fs::create_directories(dir() + "/step-000000009");
    auto loaded = store->load_latest(model_, nullptr);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ((*loaded)->step, 3);
}

TEST_F(TrainCheckpointTest, ADamagedCheckpointIsSkippedWithAReason) {
    auto opened = CheckpointStore::open(dir(), 3);
    ASSERT_TRUE(opened.ok());
    CheckpointStore* store = &opened.value();
    ASSERT_TRUE(store->save(state(1)).ok());
    ASSERT_TRUE(store->save(state(2)).ok());
    {
        std::fstream f(dir() + "/step-000000002/adam_m.bin",
                       std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x7f');
    }
    std::vector<std::string> skipped;
    auto loaded = store->load_latest(model_, &skipped);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ((*loaded)->step, 1);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_NE(skipped[0].find("adam_m.bin fails its CRC-32 check"), std::string::npos)
        << skipped[0];
}

TEST_F(TrainCheckpointTest, AnotherShapeIsRefusedNotSkipped) {
    auto opened = CheckpointStore::open(dir(), 2);
    ASSERT_TRUE(opened.ok());
    CheckpointStore* store = &opened.value();
    ASSERT_TRUE(store->save(state(1)).ok());
    ModelConfig other = model_;
    other.layers = 3;
    auto loaded = store->load_latest(other, nullptr);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.status().message().find("different model"), std::string::npos);
}

TEST_F(TrainCheckpointTest, OneRunPerDirectory) {
    auto first = CheckpointStore::open(dir(), 2);
    ASSERT_TRUE(first.ok());
    auto second = CheckpointStore::open(dir(), 2);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("another training run is using"), std::string::npos);
}

TEST_F(TrainCheckpointTest, TheWriterSavesInTheBackgroundInOrder) {
    auto opened = CheckpointStore::open(dir(), 5);
    ASSERT_TRUE(opened.ok());
    CheckpointStore* store = &opened.value();
    std::vector<std::string> done;
    {
        CheckpointWriter writer(*store);
        for (int64_t step : {1, 2, 3})
            ASSERT_TRUE(writer
                            .submit(state(step),
                                    [&](const Result<std::string>& r) {
                                        done.push_back(r.ok() ? *r : r.status().message());
                                    })
                            .ok());
        EXPECT_TRUE(writer.wait().ok());
    }
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[2], dir() + "/step-000000003");
    EXPECT_EQ(store->committed_steps(), (std::vector<int64_t>{3, 2, 1}));
}

}  // namespace
}  // namespace trainrig::train

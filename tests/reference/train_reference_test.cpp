// `trainrig train` on real text: the English corpus of the reference data, tokenized with the
// real GPT-2 vocabulary by `trainrig data tokenize`, trains the tiny GPT-2 and llama-tiny, and
// each one's validation loss falls by a stated margin in a fixed number of steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../integration/run_binary.h"
#include "reference_data.h"

namespace trainrig::testing {
namespace {

namespace fs = std::filesystem;

// The English corpus split and tokenized once for the suite: the first 900 kB train, the rest
// (about 120 kB) validates.
class TrainOnRealText : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        work_ = fs::temp_directory_path() / ("trainrig-train-text-" + std::to_string(::getpid()));
        fs::remove_all(work_);
        fs::create_directories(work_);
        const std::string text = read_binary(cache_dir() + "/corpus/english.txt");
        ASSERT_GT(text.size(), 1'000'000u);
        std::ofstream(work_ / "train.txt", std::ios::binary) << text.substr(0, 900'000);
        std::ofstream(work_ / "val.txt", std::ios::binary) << text.substr(900'000);
        const std::string env = "TRAINRIG_TOKENIZERS=" + cache_dir() + "/tokenizers";
        for (const char* split : {"train", "val"}) {
            auto r = test::run_trainrig(
                std::string(
                    "data tokenize --input-format text --tokenizer gpt2 --append-eod --input ") +
                    (work_ / (std::string(split) + ".txt")).string() + " --output-prefix " +
                    (work_ / split).string(),
                env);
            ASSERT_EQ(r.rc, 0) << r.err;
        }
    }
    static void TearDownTestSuite() { fs::remove_all(work_); }

    // Trains with `options` and returns the summary's first and last validation loss.
    static std::pair<double, double> train(const std::string& options) {
        auto r = test::run_trainrig("train " + options +
                                    " --val-batches 8 --json --no-progress --data " +
                                    (work_ / "train").string() + " --val-data " +
                                    (work_ / "val").string());
        EXPECT_EQ(r.rc, 0) << r.err;
        const auto s = nlohmann::json::parse(r.out, nullptr, false);
        if (!s.is_object() || !s["last_val_loss"].is_number()) return {0, 0};
        return {s["first_val_loss"].get<double>(), s["last_val_loss"].get<double>()};
    }

    static fs::path work_;
};

fs::path TrainOnRealText::work_;

TEST_F(TrainOnRealText, TinyGpt2LowersValidationLossByThreeNats) {
    // GPT-2's vocabulary, the tiny shape (2 layers, 64 channels): the first loss is near
    // ln(50257) = 10.8; 40 steps of 512 tokens bring validation below 7.8.
    auto [first, last] = train("--model tiny --seq 64 --batch 8 --steps 40 --lr 3e-3 --warmup 5");
    std::printf("validation loss %.3f -> %.3f in 40 steps\n", first, last);
    EXPECT_NEAR(first, std::log(50257.0), 0.2);
    EXPECT_LT(last, first - 3.0);
}

TEST_F(TrainOnRealText, LlamaTinyLowersValidationLossByAThirdIn200Steps) {
    // RMSNorm, RoPE, grouped-query attention, SwiGLU and an untied head at the tiny size, on
    // the same tokens: 200 steps of 256 tokens cut validation loss by at least 30 %.
    auto [first, last] =
        train("--model llama-tiny --seq 64 --batch 4 --steps 200 --lr 3e-3 --warmup 10");
    std::printf("llama-tiny validation loss %.3f -> %.3f in 200 steps (%.0f %% lower)\n", first,
                last, 100 * (1 - last / first));
    EXPECT_NEAR(first, std::log(50257.0), 0.2);
    EXPECT_LT(last, 0.7 * first);
}

}  // namespace
}  // namespace trainrig::testing

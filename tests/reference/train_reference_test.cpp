// `trainrig train` on real text: the English corpus of the reference data, tokenized with the
// real GPT-2 vocabulary by `trainrig data tokenize`, trains the tiny model and its validation
// loss falls by a stated margin in a fixed number of steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../integration/run_binary.h"
#include "reference_data.h"

namespace trainrig::testing {
namespace {

namespace fs = std::filesystem;

TEST(TrainOnRealText, TinyGpt2LowersValidationLossByThreeNats) {
    const fs::path work =
        fs::temp_directory_path() / ("trainrig-train-text-" + std::to_string(::getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
    // The first 900 kB train, the rest (about 120 kB) validates.
    const std::string text = read_binary(cache_dir() + "/corpus/english.txt");
    ASSERT_GT(text.size(), 1'000'000u);
    std::ofstream(work / "train.txt", std::ios::binary) << text.substr(0, 900'000);
    std::ofstream(work / "val.txt", std::ios::binary) << text.substr(900'000);
    const std::string env = "TRAINRIG_TOKENIZERS=" + cache_dir() + "/tokenizers";
    for (const char* split : {"train", "val"}) {
        auto r = test::run_trainrig(
            std::string(
                "data tokenize --input-format text --tokenizer gpt2 --append-eod --input ") +
                (work / (std::string(split) + ".txt")).string() + " --output-prefix " +
                (work / split).string(),
            env);
        ASSERT_EQ(r.rc, 0) << r.err;
    }
    // GPT-2's vocabulary, the tiny shape (2 layers, 64 channels): the first loss is near
    // ln(50257) = 10.8; 40 steps of 512 tokens bring validation below 7.8.
    auto r = test::run_trainrig(
        "train --model tiny --seq 64 --batch 8 --steps 40 --lr 3e-3 --warmup 5 "
        "--val-batches 8 --json --no-progress --data " +
        (work / "train").string() + " --val-data " + (work / "val").string());
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto s = nlohmann::json::parse(r.out);
    const double first = s["first_val_loss"].get<double>(), last = s["last_val_loss"].get<double>();
    std::printf("validation loss %.3f -> %.3f in 40 steps\n", first, last);
    EXPECT_NEAR(first, std::log(50257.0), 0.2);
    EXPECT_LT(last, first - 3.0);
    fs::remove_all(work);
}

}  // namespace
}  // namespace trainrig::testing

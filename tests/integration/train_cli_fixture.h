// The fixture of the `trainrig train` CLI tests: a token dataset with a learnable pattern (a
// fixed successor for each token, 90 % of the time), written as a Megatron prefix, and a tiny
// model shape that trains in milliseconds per step.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../unit/temp_dir_test.h"
#include "data/shards/shard_writer.h"
#include "run_binary.h"
#include "train/rng.h"

namespace trainrig::test {

using json = nlohmann::json;
namespace fs = std::filesystem;

inline constexpr uint32_t kPatternTokens = 96;

inline std::string step_dir(const std::string& ckpt, int step) {
    char name[32];
    std::snprintf(name, sizeof name, "/step-%09d", step);
    return ckpt + name;
}

// Compared without printing: a model file is megabytes of binary.
inline bool same_bytes(const std::string& a, const std::string& b) {
    const std::string x = slurp(a), y = slurp(b);
    return !x.empty() && x == y;
}

// `documents` documents of `length` tokens from a seeded first-order pattern.
inline std::string write_pattern_data(const fs::path& dir, const std::string& name, int documents,
                                      int length, uint64_t seed) {
    const std::string prefix = (dir / name).string();
    auto writer = data::make_megatron_writer(prefix, 50257);
    EXPECT_TRUE(writer.ok());
    train::Rng rng(seed);
    train::Rng pattern(12345);  // the successor table is the same in every split
    std::vector<uint32_t> next(kPatternTokens);
    for (uint32_t t = 0; t < kPatternTokens; ++t)
        next[t] = static_cast<uint32_t>(pattern.next() % kPatternTokens);
    for (int d = 0; d < documents; ++d) {
        std::vector<uint32_t> ids;
        uint32_t cur = static_cast<uint32_t>(rng.next() % kPatternTokens);
        for (int i = 0; i < length; ++i) {
            ids.push_back(cur);
            cur = rng.uniform() < 0.9 ? next[cur]
                                      : static_cast<uint32_t>(rng.next() % kPatternTokens);
        }
        EXPECT_TRUE((*writer)->add_document(ids).ok());
    }
    EXPECT_TRUE((*writer)->commit().ok());
    return prefix;
}

class TrainCliTest : public TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        train_ = write_pattern_data(dir_, "train", 40, 500, 1);
        val_ = write_pattern_data(dir_, "val", 4, 500, 2);
    }

    // The shared shape and data; `extra` adds or overrides options.
    std::string args(const std::string& extra) const {
        return "train --data " + train_ + " " + shape_ +
               " --seq 32 --batch 4 --lr 3e-3 --no-progress " + extra;
    }
    std::string ckpt(const std::string& name) const { return (dir_ / name).string(); }
    // 8 straight steps against 4, a checkpoint, and 4 more from it, bit for bit.
    void expect_exact_resume() {
        const std::string straight = ckpt("straight"), split = ckpt("split");
        ASSERT_EQ(
            run_trainrig(args("--steps 8 --ckpt-dir " + straight + " --log " + straight + ".jsonl"))
                .rc,
            0);
        ASSERT_EQ(run_trainrig(args("--steps 8 --stop-at 4 --ckpt-dir " + split)).rc, 0);
        // --steps is the total: the resumed run stops where the straight one did.
        auto r = run_trainrig(
            args("--steps 8 --resume --json --ckpt-dir " + split + " --log " + split + ".jsonl"));
        ASSERT_EQ(r.rc, 0) << r.err;
        const json s = json::parse(r.out);
        EXPECT_EQ(s["start_step"], 4);
        EXPECT_EQ(s["end_step"], 8);
        EXPECT_EQ(s["resumed_from"], step_dir(split, 4));
        for (const char* file : {"model.bin", "adam_m.bin", "adam_v.bin"})
            EXPECT_TRUE(
                same_bytes(step_dir(straight, 8) + "/" + file, step_dir(split, 8) + "/" + file))
                << file;
        // The resumed steps saw the same data: identical losses, bit for bit.
        const auto a = log_lines(straight + ".jsonl"), b = log_lines(split + ".jsonl");
        ASSERT_EQ(b.size(), 4u);
        for (size_t i = 0; i < 4; ++i)
            EXPECT_EQ(a[4 + i]["loss"], b[i]["loss"]) << "step " << i + 5;
    }

    // Data parallel over MPI: `steps` steps of two ranks at batch 4 against one rank at batch 8
    // (`env` set for both), the same tokens, losses within `loss_limit`, both ranks with the same
    // weights, and every weight within `weight_limit` of the one rank's. Returns both summaries.
    std::pair<json, json> expect_two_ranks_equal_one(
        int steps, double loss_limit, float weight_limit, const std::string& env = "",
        const std::vector<std::string>& exported = {}) {
        if (std::system("command -v mpirun >/dev/null") != 0) {
            ADD_FAILURE() << "mpirun is missing: scripts/install-deps.sh installs openmpi-bin";
            return {json::object(), json::object()};
        }
        const std::string one = ckpt("one"), two = ckpt("two");
        const std::string common =
            " --steps " + std::to_string(steps) + " --json --dim 64 --seq 64 --log ";
        auto r1 = run_trainrig(args("--batch 8 --ckpt-dir " + one + common + one + ".jsonl"), env);
        EXPECT_EQ(r1.rc, 0) << r1.err;
        auto r2 = run_trainrig(args("--batch 4 --ckpt-dir " + two + common + two + ".jsonl"),
                               env + mpirun_prefix(2, exported));
        EXPECT_EQ(r2.rc, 0) << r2.err;
        if (r1.rc != 0 || r2.rc != 0) return {json::object(), json::object()};
        const json s1 = json::parse(r1.out), s2 = json::parse(r2.out);
        EXPECT_EQ(s2["world"], 2);
        EXPECT_EQ(s2["replicas_identical"], true);
        const auto a = log_lines(one + ".jsonl"), b = log_lines(two + ".jsonl");
        EXPECT_EQ(a.size(), static_cast<size_t>(steps));
        EXPECT_EQ(b.size(), static_cast<size_t>(steps));  // rank 0 alone writes the log
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
            EXPECT_EQ(a[i]["tokens"], b[i]["tokens"]);
            EXPECT_NEAR(a[i]["loss"].get<double>(), b[i]["loss"].get<double>(), loss_limit)
                << "step " << i + 1;
        }
        const auto w1 = floats(step_dir(one, steps) + "/model.bin"),
                   w2 = floats(step_dir(two, steps) + "/model.bin");
        EXPECT_EQ(w1.size(), w2.size());
        EXPECT_FALSE(w1.empty());
        float worst = 0;
        for (size_t i = 0; i < std::min(w1.size(), w2.size()); ++i)
            worst = std::max(worst, std::abs(w1[i] - w2[i]));
        EXPECT_LT(worst, weight_limit);
        std::printf("max |weight difference| after %d steps: %g\n", steps,
                    static_cast<double>(worst));
        return {s1, s2};
    }

    static std::vector<float> floats(const fs::path& file) {
        const std::string bytes = slurp(file);
        std::vector<float> v(bytes.size() / sizeof(float));
        std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
        return v;
    }
    static std::vector<json> log_lines(const fs::path& file) {
        std::vector<json> out;
        std::istringstream in(slurp(file));
        for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
        return out;
    }

    std::string train_, val_;
    // The model: a 2-layer GPT-2 shape unless a test trains another family.
    std::string shape_ = "--layers 2 --heads 2 --dim 32 --vocab 128";
};

}  // namespace trainrig::test

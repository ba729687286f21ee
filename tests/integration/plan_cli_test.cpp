// `trainrig plan` as a user runs it: the article's case in JSON, comparison, real config.json
// files, --explain, catalog files, exit codes and the one-sentence errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace trainrig::test {
namespace {

using json = nlohmann::json;

const std::string kArticle =
    "plan --model llama2-13b --gpu a100-80g-sxm --gpu-count 4 --seq 4096 --global-batch 128";

std::string hf(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/hf/" + name;
}

json run_json(const std::string& args, int expect_rc) {
    auto r = run_trainrig(args + " --json");
    EXPECT_EQ(r.rc, expect_rc) << args << "\n" << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    auto doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out.substr(0, 300);
    return doc;
}

TEST(PlanCli, TheReadmesMinimumExampleFindsAMachine) {
    // As README.md and docs/plan.md write it: --minimum varies TP, PP and recompute the user
    // left open before saying nothing fits.
    auto r = run_trainrig(
        "plan --model llama2-70b --gpu h100-sxm --minimum --target-tokens-per-s 20000");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Fewest GPUs: "), std::string::npos) << r.out;
    // Fixed by the user, the layout stays: then memory binds, and says so.
    r = run_trainrig(
        "plan --model llama2-70b --gpu h100-sxm --minimum --tp 1 --pp 1 "
        "--recompute none --max-gpus 64");
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("memory binds"), std::string::npos) << r.out;
}

TEST(PlanCli, TheTableHasNoExponentsAndChoosesOnlyWhatFits) {
    auto r = run_trainrig("plan --model llama2-70b --gpu h100-sxm --gpu-count 8 --tokens 2e12");
    EXPECT_EQ(r.rc, 1) << r.err;  // does not fit on 8 without recompute
    EXPECT_EQ(r.out.find("e+"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("444 GFLOP/token"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("(chosen)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ZeRO-3 (closest)"), std::string::npos) << r.out;
}

TEST(PlanCli, ArticleCaseJsonHasAVerdictPerZeroStage) {
    auto doc = run_json(kArticle, 1);
    EXPECT_EQ(doc["schema"], "trainrig.plan");
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc["parameters"]["total"], 13'015'864'320LL);
    ASSERT_EQ(doc["memory"]["zero_stages"].size(), 4u);
    std::vector<bool> fits;
    std::vector<bool> tight;
    for (const auto& s : doc["memory"]["zero_stages"]) {
        fits.push_back(s["fits"].get<bool>());
        tight.push_back(s["tight"].get<bool>());
    }
    // ZeRO-3 holds it with 3.5 GiB of 80 to spare: under the 5 % margin, so tight, exit 1.
    EXPECT_EQ(fits, (std::vector<bool>{false, false, false, false}));
    EXPECT_EQ(tight, (std::vector<bool>{false, false, false, true}));
    EXPECT_EQ(doc["job"]["zero"], 3);
    EXPECT_EQ(doc["job"]["grad_accum"], 32);
    EXPECT_EQ(doc["fits"], false);
    EXPECT_EQ(run_json(kArticle + " --recompute full", 0)["fits"], true);
    // Model states at ZeRO-0: 16 bytes per parameter, not the article's 78 GB.
    EXPECT_NEAR(doc["memory"]["zero_stages"][0]["model_states_bytes"].get<double>(), 208.25e9,
                0.01e9);
    EXPECT_GT(doc["derivation"].size(), 20u);
    for (const auto& step : doc["derivation"])
        EXPECT_FALSE(step["source"].get<std::string>().empty());
    EXPECT_TRUE(doc["training"].is_null());
}

TEST(PlanCli, DoesNotFitIsExitOne) {
    auto doc =
        run_json("plan --model llama2-13b --gpu a100-80g-sxm --gpu-count 4 --seq 4096 --zero 0", 1);
    EXPECT_EQ(doc["fits"], false);
}

TEST(PlanCli, CompareRanksMachinesAndUsesTheCatalogFile) {
    const std::string catalog =
        std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/plan/catalog.toml";
    auto doc = run_json(
        "plan --model llama2-13b --compare --gpu a100-80g-sxm,h100-sxm,rtx4090 "
        "--gpu-count 4,8 --seq 4096 --global-batch 128 --tokens 2B --catalog " +
            catalog,
        0);
    EXPECT_EQ(doc["schema"], "trainrig.plan.compare");
    const auto& rows = doc["machines"];
    ASSERT_EQ(rows.size(), 6u);
    double last = 0;
    for (size_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(rows[i]["ok"].get<bool>()) << rows[i].dump();
        const double usd = rows[i]["usd_per_million_tokens"].get<double>();
        EXPECT_GE(usd, last);
        last = usd;
    }
    EXPECT_EQ(rows[4]["ok"], false);
    EXPECT_EQ(rows[4]["gpu"], "rtx4090");
    auto table = run_trainrig(
        "plan --model llama2-13b --compare --gpu a100-80g-sxm --gpu-count 1,4 --seq 4096");
    EXPECT_EQ(table.rc, 0) << table.err;
    EXPECT_NE(table.out.find("Not these:"), std::string::npos);
}

TEST(PlanCli, ReadsRealConfigFiles) {
    auto doc = run_json("plan --model-config " + hf("Qwen2.5-7B-Instruct.json") +
                            " --gpu h100-sxm --gpu-count 8 --seq 2048",
                        0);
    EXPECT_EQ(doc["parameters"]["total"], 7'615'616'512LL);
    EXPECT_EQ(doc["model"]["kv_heads"], 4);
    doc = run_json(
        "plan --model-config " + hf("gpt2.json") + " --gpu rtx4090 --gpu-count 1 --seq 1024", 0);
    EXPECT_EQ(doc["parameters"]["total"], 124'439'808);
}

TEST(PlanCli, ExplainPrintsEveryFormulaWithItsSource) {
    auto r = run_trainrig(kArticle + " --explain --tokens 2B");
    ASSERT_EQ(r.rc, 1) << r.err;  // tight: exit 1, every formula still shown
    auto doc = run_json(kArticle + " --tokens 2B", 1);
    for (const auto& step : doc["derivation"])
        EXPECT_NE(r.out.find("(" + step["id"].get<std::string>() + ")"), std::string::npos)
            << step["id"];
    EXPECT_NE(r.out.find("source: Korthikanti"), std::string::npos);
    EXPECT_NE(r.out.find("= 4 x 12.9G + 8 x 40 x 4096 x 5120"), std::string::npos);
    // Printed with every formula, the table does not point at them again.
    EXPECT_EQ(r.out.find("--explain shows"), std::string::npos) << r.out;
    EXPECT_NE(run_trainrig(kArticle).out.find("--explain shows"), std::string::npos);
}

TEST(PlanCli, MinimumAndTargets) {
    auto doc = run_json(
        "plan --model llama2-13b --gpu a100-80g-sxm --minimum --seq 4096 "
        "--global-batch 128 --target-tokens-per-s 20000",
        0);
    EXPECT_GE(doc["time"]["tokens_per_second"].get<double>(), 20000);
    EXPECT_EQ(doc["target"]["met"], true);
    EXPECT_EQ(doc["minimum"], doc["machine"]["gpus"]);
    doc = run_json(
        "plan --model llama2-13b --gpu a100-80g-sxm --gpu-count 4 --seq 4096 "
        "--global-batch 128 --tokens 2B --deadline 1h",
        1);
    EXPECT_EQ(doc["target"]["met"], false);
    doc = run_json("plan --model llama2-70b --gpu rtx4090 --minimum --max-gpus 8", 1);
    EXPECT_TRUE(doc["minimum"].is_null());
}

// No --gpu: the model's own figures and, per catalog GPU, the fewest that fit (what
// `--gpu ID --minimum` answers for one), instead of a refusal.
TEST(PlanCli, AModelAloneGetsItsFiguresAndTheGpusItFitsOn) {
    auto doc = run_json("plan --model llama2-7b", 0);
    EXPECT_EQ(doc["schema"], "trainrig.plan.model");
    EXPECT_EQ(doc["model"]["params"], 6738415616);  // Llama 2 7B as Meta publishes it
    EXPECT_GT(doc["flops_per_token"]["model"].get<double>(), 6 * 6.7e9);
    const double states = doc["model_states_bytes"]["weights"].get<double>() +
                          doc["model_states_bytes"]["gradients"].get<double>() +
                          doc["model_states_bytes"]["optimizer"].get<double>();
    EXPECT_NEAR(states / 6738415616.0, 16.0, 0.5);  // mixed-precision Adam: 16 bytes/param
    bool h100 = false;
    for (const auto& f : doc["fits"]) {
        if (f["gpu"] != "h100-sxm") continue;
        h100 = true;
        // The same answer as asking for this GPU alone.
        auto one = run_json("plan --model llama2-7b --gpu h100-sxm --minimum", 0);
        EXPECT_EQ(f["gpus"], one["minimum"]);
        EXPECT_LE(f["memory_bytes"].get<double>(), f["capacity_bytes"].get<double>());
    }
    EXPECT_TRUE(h100);
    auto r = run_trainrig("plan --model llama2-7b");
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out.find("e+"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("h100-sxm"), std::string::npos) << r.out;
}

TEST(PlanCli, BadInputIsOneSentenceAndExitTwo) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"plan --model llama-13b --gpu h100-sxm", "unknown model \"llama-13b\""},
        {"plan --model llama2-13b --gpu h100-sxm --gpu-count 6 --tp 3",
         "TP 3 does not divide the 40 attention heads"},
        {"plan --model llama2-13b --gpu h100-sxm --gpu-count 0",
         "--gpu-count 0: at least 1 GPU is needed"},
        {"plan --model llama2-13b --gpu h100-sxm --seq -4", "--seq -4 is outside 1..1000000000"},
        {"plan --model llama2-7b --gpu h100-sxm --gpu-count 8 --tp 0 --global-batch 8",
         "--tp 0 is outside"},
        {"plan --model llama2-7b --gpu h100-sxm --minimum --tp -2", "--tp -2 is outside"},
        {"plan --model llama2-7b --gpu h100-sxm --minimum --gpus-per-node 0", "--gpus-per-node 0"},
        {"plan --model llama2-7b --compare --tp 0 --global-batch 8", "--tp 0 is outside"},
        {"plan --model llama2-7b --gpu h100-sxm --gpu-count 2147483647",
         "--gpu-count 2147483647 is outside"},
        {"plan --model llama2-7b --gpu h100-sxm --micro-batch 9223372036854775807",
         "--micro-batch"},
        {"plan --model llama2-7b --hidden 2000000000 --heads 1 --gpu h100-sxm",
         "hidden size is 2000000000"},
        {"plan --model llama2-13b --gpu h100-sxm --gpu-count 8 --tp 3 --global-batch 7",
         "do not split into model replicas"},
        {"plan --model llama2-13b --gpu h100x", "unknown GPU \"h100x\""},
        // The typo is the error, not the count of ids.
        {"plan --model llama2-13b --gpu nosuch,h100-sxm", "unknown GPU \"nosuch\""},
        {"plan --model llama2-13b --gpu-count 4", "--gpu-count needs --gpu ID"},
        {"plan --model llama2-13b --minimum", "--minimum needs --gpu ID"},
        {"plan --model llama2-13b --gpu h100-sxm --tokens lots",
         "--tokens \"lots\" is not a count"},
        {"plan --model-config /nonexistent/config.json --gpu h100-sxm", "/nonexistent/config.json"},
        {"plan --model llama2-13b --gpu h100-sxm --gpu-count 8 --global-batch 12",
         "global batch 12 is not a multiple"},
        {"plan --model llama2-13b --gpu a100-80g-sxm --precision fp8",
         "no fp8 tensor-core throughput"},
    };
    for (const auto& [args, needle] : cases) {
        auto r = run_trainrig(args);
        EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
        EXPECT_TRUE(r.out.empty()) << args;
        EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}

TEST(PlanCli, OutputFileIsWrittenWholeOrNotAtAll) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("plan-out-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto out = dir / "plan.json";
    auto r = run_trainrig(kArticle + " --json -o " + out.string());
    EXPECT_EQ(r.rc, 1) << r.err;  // the article's case is tight (docs/plan.md)
    EXPECT_FALSE(json::parse(slurp(out), nullptr, false).is_discarded());
    r = run_trainrig("plan --model nope --gpu h100-sxm --json -o " + (dir / "bad.json").string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.json"));
    std::filesystem::remove_all(dir);
}

TEST(PlanCli, ListShowsTheCatalogs) {
    auto r = run_trainrig("plan --list");
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("llama2-13b"), std::string::npos);
    EXPECT_NE(r.out.find("h200-sxm"), std::string::npos);
    EXPECT_NE(r.out.find("ib-ndr"), std::string::npos);
}

}  // namespace
}  // namespace trainrig::test

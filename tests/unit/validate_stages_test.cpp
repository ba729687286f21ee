// validate's stages as objects (src/validate/stages/): the one list and the documented table
// agree, and each stage says why it does not run on a machine the same way the report does.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "validate/stages/stage_list.h"
#include "validate/validate_run.h"

namespace trainrig::validate {
namespace {

std::vector<std::string> documented_stages() {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/docs/report.md");
    std::vector<std::string> out;
    std::string line;
    bool in_section = false;
    const std::regex row(R"(^\| `([a-z-]+)` \|)");
    while (std::getline(in, line)) {
        if (line.starts_with("## ")) in_section = line == "## Stages";
        std::smatch m;
        if (in_section && std::regex_search(line, m, row)) out.push_back(m[1]);
    }
    return out;
}

TEST(ValidateStages, TheListIsTheDocumentedTableInItsOrder) {
    EXPECT_EQ(stage_names(), documented_stages());
    std::vector<std::string> ids;
    for (const auto& s : make_stages()) ids.push_back(s->id());
    EXPECT_EQ(ids, stage_names());
}

TEST(ValidateStages, BudgetsGrowWithTheLevel) {
    for (const auto& s : make_stages()) {
        EXPECT_LE(s->budget_seconds(RunLevel::kQuick), s->budget_seconds(RunLevel::kStandard))
            << s->id();
        EXPECT_LE(s->budget_seconds(RunLevel::kStandard), s->budget_seconds(RunLevel::kLong))
            << s->id();
    }
}

// Why each stage does not run, by id; "runs" when it does.
std::map<std::string, std::string> reasons(const RunContext& ctx) {
    std::map<std::string, std::string> out;
    for (const auto& s : make_stages()) {
        const auto skip = s->applies(ctx);
        out[s->id()] =
            !skip ? "runs"
                  : skip->reason +
                        (skip->state == StageState::kCouldNotRun ? " [could not run]" : "") +
                        (skip->by_user ? " [by user]" : "");
    }
    return out;
}

TEST(ValidateStages, WithoutTheMachineReadOnlyDoctorRuns) {
    ValidateOptions o;
    const RunContext ctx(o);
    for (const auto& [id, why] : reasons(ctx)) EXPECT_EQ(why, id == "doctor" ? "runs" : "") << id;
}

TEST(ValidateStages, AMachineTreeRunsTheStagesThatReadNoLiveMachine) {
    ValidateOptions o;
    o.collect.root = std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/machines/article-box";
    RunContext ctx(o);
    ctx.snapshot.emplace();
    const auto why = reasons(ctx);
    EXPECT_EQ(why.at("doctor"), "runs");
    EXPECT_EQ(why.at("topology"), "runs");
    for (const char* id : {"host-bench", "gpu-bench", "data-path", "training", "batch-probe"})
        EXPECT_EQ(why.at(id), kLiveOnly) << id;
}

TEST(ValidateStages, OnAGpuMachineSkipsHangsAndLevelsAreSaid) {
    ValidateOptions o;
    o.skip = {"host-bench", "tokenizer", "loader", "watch"};
    o.gpus = {1};
    RunContext ctx(o);
    ctx.snapshot.emplace();
    ctx.scope = Scope::kGpu;
    auto why = reasons(ctx);
    EXPECT_EQ(why.at("host-bench"), "skipped with --skip [by user]");
    EXPECT_EQ(why.at("data-path"), "every benchmark of it skipped with --skip [by user]");
    EXPECT_EQ(why.at("gpu-bench"), "runs");
    EXPECT_EQ(why.at("training"), "runs");
    EXPECT_EQ(why.at("batch-probe"), "runs at --level standard and long");
    EXPECT_EQ(why.at("watch"), "skipped with --skip [by user]");

    o.level = RunLevel::kStandard;
    EXPECT_EQ(reasons(ctx).at("batch-probe"),
              "--gpus leaves out GPU 0, the GPU the probe trains on");
    o.gpus.clear();
    ctx.hung = "gpu-bench";
    why = reasons(ctx);
    EXPECT_EQ(why.at("training"),
              "not run: the gpu-bench stage hung and was killed [could not run]");
    EXPECT_EQ(why.at("batch-probe"), "not run: the gpu-bench stage hung and was killed");
}

TEST(ValidateStages, AHostWithoutGpusSkipsTheGpuStages) {
    ValidateOptions o;
    RunContext ctx(o);
    ctx.snapshot.emplace();
    ctx.scope = Scope::kHost;
    const auto why = reasons(ctx);
    EXPECT_EQ(why.at("gpu-bench"), kNoGpu);
    EXPECT_EQ(why.at("batch-probe"), kNoGpu);
    EXPECT_EQ(why.at("host-bench"), "runs");
    for (const auto& s : make_stages()) {
        EXPECT_EQ(s->required(ctx),
                  s->id() == std::string("doctor") || s->id() == std::string("training"))
            << s->id();
    }
}

}  // namespace
}  // namespace trainrig::validate

// The data-path stage: the tokenizer (--tokenizer on --input's text, else the built-in ones) and
// the loader (`trainrig bench run tokenizer loader`). The loader reads --shards, or tokens
// generated for it in the data directory (or the temp directory), removed when the stage ends.
#include <filesystem>

#include "core/cancel_signals.h"
#include "validate/stages/measuring_stage.h"
#include "validate/stages/stage_list.h"
#include "validate/synthetic_shard.h"

namespace trainrig::validate {

namespace {

// The generated tokens when --shards names none: 8 MiB at quick, 128 MiB (larger than most
// last-level caches, so the loader's random windows miss them) otherwise.
uint64_t synthetic_tokens(RunLevel l) { return l == RunLevel::kQuick ? 4ull << 20 : 64ull << 20; }

class DataPathStage final : public MeasuringStage {
public:
    const char* id() const override { return "data-path"; }
    const char* title() const override { return "data path (tokenizer, loader)"; }
    double budget_seconds(RunLevel l) const override { return per_level(l, 5, 30, 30); }

    Status run(RunContext& ctx, StageRecord& record) override {
        Status st = MeasuringStage::run(ctx, record);
        synthetic_.reset();
        return st;
    }

protected:
    std::vector<std::string> benchmarks(const RunContext&) const override {
        return {"tokenizer", "loader"};
    }

    Status prepare(RunContext& ctx, bench::BenchOptions& b) override {
        if (!b.shards.empty() || ctx.skipped_by_user("loader")) return ok_status();
        const std::string parent =
            !b.data_dir.empty() ? b.data_dir : std::filesystem::temp_directory_path().string();
        auto shard = SyntheticShard::write(parent, synthetic_tokens(ctx.options.level),
                                           &CancelSignals::flag());
        if (!shard.ok()) return shard.status();
        synthetic_.emplace(std::move(shard).value());
        b.shards = {synthetic_->path()};
        return ok_status();
    }

private:
    std::optional<SyntheticShard> synthetic_;
};

}  // namespace

std::unique_ptr<Stage> data_path_stage() { return std::make_unique<DataPathStage>(); }

}  // namespace trainrig::validate

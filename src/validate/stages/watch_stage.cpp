// The watch stage: watch's GPU sampler and alert rules in the background (watch_recorder.h), from
// before the first measuring stage until the last has ended, so the report has each GPU's
// temperature, clocks and power through the run and every alert that fired. No driver: no
// telemetry, and no watch section.
#include <chrono>

#include "validate/report_items.h"
#include "validate/stages/stage.h"
#include "validate/stages/stage_list.h"
#include "validate/watch_recorder.h"

namespace trainrig::validate {

namespace {

class WatchStage final : public Stage {
public:
    const char* id() const override { return "watch"; }
    const char* title() const override { return "GPU telemetry through the run (watch)"; }
    double budget_seconds(RunLevel) const override { return 0; }
    bool beside() const override { return true; }

    void start_beside(RunContext& ctx) override {
        if (ctx.live() && !ctx.skipped_by_user(id()) && !RunContext::interrupted())
            recorder_.emplace(1.0);
        started_ = std::chrono::steady_clock::now();
    }

    std::optional<Skip> applies(const RunContext& ctx) const override {
        if (recorder_) return std::nullopt;
        if (!ctx.snapshot) return Skip{};
        if (!ctx.live()) return Skip{kLiveOnly};
        if (ctx.skipped_by_user(id())) return Skip{kSkippedByUser, StageState::kSkipped, true};
        return Skip{kInterruptedBefore};
    }

    Status run(RunContext& ctx, StageRecord& w) override {
        recorder_->stop();
        w.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        if (recorder_->absent()) {
            w.reason = "no NVIDIA driver: no GPU telemetry";
            return ok_status();
        }
        if (!recorder_->problem().empty()) {
            w.state = StageState::kCouldNotRun;
            w.required = ctx.scope == Scope::kGpu;
            w.reason = recorder_->problem();
        } else {
            w.state = StageState::kRan;
            for (const auto& a : recorder_->alerts()) ctx.items.push_back(alert_item(a));
        }
        nlohmann::json alerts = nlohmann::json::array();
        for (const auto& a : recorder_->alerts())
            alerts.push_back(nlohmann::json::parse(watch::alert_json(a)));
        ctx.report.set("watch", {{"ticks", recorder_->ticks()},
                                 {"problem", recorder_->problem()},
                                 {"samples", recorder_->samples()},
                                 {"alerts", alerts}});
        ctx.report.add_raw("watch.json", ctx.report.at("watch"));
        return ok_status();
    }

private:
    std::optional<WatchRecorder> recorder_;
    std::chrono::steady_clock::time_point started_;
};

}  // namespace

std::unique_ptr<Stage> watch_stage() { return std::make_unique<WatchStage>(); }

}  // namespace trainrig::validate

#include "validate/report_builder.h"

#include <algorithm>

#include "core/utc_time.h"
#include "validate/report_items.h"

namespace trainrig::validate {

ReportBuilder::ReportBuilder()
    : report_({{"schema", "trainrig.validate"}, {"schema_version", kReportSchemaVersion}}) {}

void ReportBuilder::set(const std::string& section, nlohmann::json value) {
    report_[section] = std::move(value);
}

void ReportBuilder::add_raw(const std::string& name, const nlohmann::json& doc) {
    raw_["raw/" + name] = doc.dump(1) + "\n";
}

nlohmann::json ReportBuilder::finish(const RunSummary& run, const std::vector<StageRecord>& stages,
                                     std::vector<Item> items) {
    nlohmann::json stage_docs = nlohmann::json::array(), item_docs = nlohmann::json::array();
    for (const auto& s : stages) stage_docs.push_back(stage_json(s));
    // Failures first, then what could not be judged, then warnings: the order people act in.
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        auto rank = [](Level l) { return l == Level::kFail ? 0 : l == Level::kUnknown ? 1 : 2; };
        return rank(a.level) < rank(b.level);
    });
    for (const auto& i : items) item_docs.push_back(item_json(i));
    report_["verdict"] = verdict_name(run.outcome.verdict);
    report_["verdict_line"] = run.outcome.line;
    report_["scope"] = scope_name(run.scope);
    report_["level"] = run.level;
    report_["incomplete"] = run.incomplete;
    report_["started_at"] = utc_iso8601(run.started);
    report_["finished_at"] = utc_iso8601(run.finished);
    report_["seconds"] = std::difftime(run.finished, run.started);
    report_["command_line"] = run.command_line;
    report_["baseline"] = run.baseline;
    report_["stages"] = stage_docs;
    report_["items"] = item_docs;
    if (!report_.contains("host")) report_["host"] = nullptr;
    return std::exchange(report_, nlohmann::json());
}

}  // namespace trainrig::validate

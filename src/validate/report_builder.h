// report.json (docs/report.md, "report.json"), as validate's stages fill it: each stage sets its
// own sections ("doctor", "topology", "bench", "watch") and raw/ files; finish() adds what the
// whole run says: the verdict, the scope and level, the times, the stages and the items, in the
// order people act on them.
#pragma once

#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validate/verdict.h"

namespace trainrig::validate {

// 2 added `coverage` (docs/report.md, "Coverage"); readers take 1 and 2.
inline constexpr int kReportSchemaVersion = 2;

struct RunSummary {
    Outcome outcome;
    Scope scope = Scope::kTree;
    const char* level = "quick";
    bool incomplete = false;
    std::time_t started = 0, finished = 0;
    std::vector<std::string> command_line;
    nlohmann::json baseline;  // what --baseline was (path, host, matched, ...); null without it
};

class ReportBuilder {
public:
    ReportBuilder();

    void set(const std::string& section, nlohmann::json value);
    bool has(const std::string& section) const { return report_.contains(section); }
    const nlohmann::json& at(const std::string& section) const { return report_.at(section); }
    // raw/<name>: a section's document as the report directory keeps it.
    void add_raw(const std::string& name, const nlohmann::json& doc);

    // The finished document; the builder is empty afterwards.
    nlohmann::json finish(const RunSummary& run, const std::vector<StageRecord>& stages,
                          std::vector<Item> items);
    std::map<std::string, std::string> take_raw() { return std::move(raw_); }

private:
    nlohmann::json report_;
    std::map<std::string, std::string> raw_;
};

}  // namespace trainrig::validate

// The items validate's verdict is made of (validate/verdict.h) as each stage finds them: a
// benchmark below its expectation, a benchmark that could not run, a watch alert, a doctor
// finding; and the report's JSON for items and stages (docs/report.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "doctor/finding.h"
#include "validate/verdict.h"
#include "watch/alert_engine.h"

namespace trainrig::validate {

// A device named in a record's target: "GPU 3", or the disk's name.
std::vector<std::string> devices_of(const nlohmann::json& target);
// What to do when a measurement of `bench` falls short.
std::string bench_action(const std::string& bench);
// The items a stage's records from `first_record` and errors from `first_error` make.
void bench_items(const bench::BenchRun& run, size_t first_record, size_t first_error,
                 const std::string& stage, std::vector<Item>& items);
// A watch alert raised during the run.
Item alert_item(const watch::Alert& a);
// A doctor finding that did not pass: fail, warn, or unknown (an error).
Item finding_item(const Finding& f);

nlohmann::json item_json(const Item& i);
nlohmann::json stage_json(const StageRecord& s);

}  // namespace trainrig::validate

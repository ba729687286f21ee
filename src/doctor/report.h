// The doctor report: findings plus where they came from, its exit code, and its renderers
// (one record, many printers: table, JSON, Markdown).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "doctor/rule.h"

namespace trainrig {

inline constexpr const char* kDoctorSchema = "trainrig.doctor";
inline constexpr int kDoctorSchemaVersion = 1;

struct DoctorReport {
    std::string hostname;
    std::string source;  // "live machine (root /)" or "snapshot FILE"
    std::string collected_at;
    std::vector<Finding> findings;
    bool strict = false;
};

struct Selection {
    std::vector<std::string> only;  // rule ids; empty = all
    std::vector<std::string> skip;
};

// Whether --only/--skip keep the rule with this id.
bool selected(std::string_view id, const Selection& sel);

// Judges a snapshot: every selected rule, in list order.
std::vector<Finding> judge(const Snapshot& s, const RuleOptions& o, const Selection& sel);

std::map<FindingStatus, int> count_by_status(const std::vector<Finding>& findings);

// 0 healthy (warnings allowed unless strict), 1 a check failed, 2 a check could not run.
int doctor_exit_code(const std::vector<Finding>& findings, bool strict);

}  // namespace trainrig

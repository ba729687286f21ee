// Judging, counting and the exit code of a doctor run.
#include "doctor/report.h"

#include <algorithm>

namespace trainrig {

bool selected(std::string_view id, const Selection& sel) {
    auto listed = [&](const std::vector<std::string>& ids) {
        return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    return (sel.only.empty() || listed(sel.only)) && !listed(sel.skip);
}

std::vector<Finding> judge(const Snapshot& s, const RuleOptions& o, const Selection& sel) {
    std::vector<Finding> out;
    for (const auto& rule : all_rules())
        if (selected(rule.id, sel)) out.push_back(run_rule(rule, s, o));
    return out;
}

std::map<FindingStatus, int> count_by_status(const std::vector<Finding>& findings) {
    std::map<FindingStatus, int> c{{FindingStatus::kPass, 0},
                                   {FindingStatus::kWarn, 0},
                                   {FindingStatus::kFail, 0},
                                   {FindingStatus::kSkip, 0},
                                   {FindingStatus::kError, 0}};
    for (const auto& f : findings) ++c[f.status];
    return c;
}

int doctor_exit_code(const std::vector<Finding>& findings, bool strict) {
    auto c = count_by_status(findings);
    if (c[FindingStatus::kFail] > 0) return 1;
    if (strict && c[FindingStatus::kWarn] > 0) return 1;
    if (c[FindingStatus::kError] > 0) return 2;
    return 0;
}

}  // namespace trainrig

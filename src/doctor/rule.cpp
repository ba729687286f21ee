// The one explicit list of doctor rules. To add a rule: write it in the area's rules_*.cpp,
// return it from that file's list, and document its id in docs/checks.md (a test checks that
// every id is documented).
#include "doctor/rule.h"

#include <exception>

namespace trainrig {

const std::vector<Rule>& all_rules() {
    static const std::vector<Rule> rules = [] {
        std::vector<Rule> all;
        for (auto list :
             {pci_rules(), numa_rules(), kernel_rules(), sysctl_rules(), cpu_memory_rules(),
              iommu_rules(), driver_rules(), gpu_inventory_rules(), gpu_settings_rules(),
              gpu_memory_rules(), gpu_thermal_rules(), gpu_pcie_rules(), gpu_nvlink_rules(),
              stack_rules(), stack_lock_rules(), kmsg_rules(), nccl_rules(), storage_rules()})
            all.insert(all.end(), list.begin(), list.end());
        return all;
    }();
    return rules;
}

const Rule* find_rule(std::string_view id) {
    for (const auto& r : all_rules())
        if (r.id == id) return &r;
    return nullptr;
}

Finding run_rule(const Rule& rule, const Snapshot& s, const RuleOptions& o) {
    Finding f;
    f.id = rule.id;
    f.title = rule.title;
    f.refs = rule.refs;
    try {
        if (rule.applies) {
            if (auto reason = rule.applies(s, o)) {
                f.status = FindingStatus::kSkip;
                f.summary = *reason;
                return f;
            }
        }
        rule.check(s, o, f);
        if (f.summary.empty()) f.raise(FindingStatus::kError, "rule produced no verdict");
    } catch (const std::exception& e) {
        // A rule bug must not take the whole report down: say so in this finding.
        f.status = FindingStatus::kError;
        f.summary = std::string("internal error in rule: ") + e.what();
    }
    return f;
}

}  // namespace trainrig

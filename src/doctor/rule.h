// A doctor rule: a pure function from a Snapshot to one Finding. Rules have the shape
// id / title / applies() (a reason to skip) / check(), and live one area per file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/finding.h"
#include "policy/gpu_health.h"
#include "snapshot/snapshot.h"

namespace trainrig {

// Judging parameters that are not facts of the machine.
struct StackLock;

struct RuleOptions {
    std::optional<int> expect_gpus;   // --expect-gpus: GPUs the machine should have
    const StackLock* lock = nullptr;  // --lock: the environment the machine should keep
    // The tuning profile's files as they are now (path -> content, none = absent); not set
    // when judging a snapshot.
    std::optional<std::map<std::string, std::optional<std::string>>> profile_files;
};

struct Rule {
    std::string id;
    std::string title;
    std::vector<std::string> refs;
    // A reason when the rule does not apply to this machine; the finding is then `skip`.
    std::optional<std::string> (*applies)(const Snapshot&, const RuleOptions&) = nullptr;
    // Sets status, summary, evidence, remedy and data on a finding whose id/title/refs are set.
    void (*check)(const Snapshot&, const RuleOptions&, Finding&) = nullptr;
};

// The one explicit list of rules, in report order (rule.cpp).
const std::vector<Rule>& all_rules();
const Rule* find_rule(std::string_view id);

// Runs one rule: applies(), then check(); a rule never throws past here.
Finding run_rule(const Rule& rule, const Snapshot& s, const RuleOptions& o);

// Per-area lists, concatenated by all_rules().
std::vector<Rule> pci_rules();
std::vector<Rule> numa_rules();
std::vector<Rule> kernel_rules();
std::vector<Rule> sysctl_rules();
std::vector<Rule> cpu_memory_rules();
std::vector<Rule> iommu_rules();
std::vector<Rule> driver_rules();
std::vector<Rule> kmsg_rules();
std::vector<Rule> nccl_rules();
std::vector<Rule> storage_rules();
std::vector<Rule> gpu_inventory_rules();
std::vector<Rule> gpu_settings_rules();
std::vector<Rule> gpu_memory_rules();
std::vector<Rule> gpu_thermal_rules();
std::vector<Rule> gpu_pcie_rules();
std::vector<Rule> gpu_nvlink_rules();
std::vector<Rule> stack_rules();
std::vector<Rule> stack_lock_rules();

// A verdict of the health policy as a finding's status (policy/gpu_health.h).
inline FindingStatus status_of(policy::Verdict v) {
    return v == policy::Verdict::kFail   ? FindingStatus::kFail
           : v == policy::Verdict::kWarn ? FindingStatus::kWarn
                                         : FindingStatus::kPass;
}

// More than one NUMA node or socket: where binding to a node matters.
inline bool is_multi_node(const Topology& t) { return t.numa_nodes.size() > 1 || t.packages > 1; }

// If the fact could not be read, marks the finding `error` with the fact's message and returns
// false: the common first line of a check.
template <class T>
bool need(const Fact<T>& fact, Finding& f) {
    if (!fact.is_failed()) return true;
    f.raise(FindingStatus::kError, fact.status().message());
    f.evidence.push_back(fact.status().message());
    return false;
}

}  // namespace trainrig

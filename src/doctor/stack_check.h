// `trainrig stack check`: this machine (or a snapshot) against the recommended stack. Doctor's
// own stack rules (stack.cuda-driver, stack.torch, stack.nccl) judge what they judge, so the two
// commands never disagree; the recommended.* findings add each difference from the
// recommendation with its consequence.
#pragma once

#include <string>
#include <vector>

#include "doctor/finding.h"
#include "snapshot/snapshot.h"
#include "stack/recommend.h"
#include "stack/stack_data.h"

namespace trainrig::stack {

// The doctor rules whose verdicts `stack check` reports as its own.
inline const std::vector<std::string>& doctor_stack_rule_ids() {
    static const std::vector<std::string> ids = {"stack.cuda-driver", "stack.torch", "stack.nccl"};
    return ids;
}

struct CheckRow {
    std::string component;    // driver, CUDA toolkit, PyTorch, NCCL
    std::string installed;    // what this machine has ("not read here", "none")
    std::string recommended;  // what the recommendation says
    // Its recommended.* finding's, made worse (never better) by doctor's finding about it; at
    // best a skip where the recommendation is not recorded.
    FindingStatus status = FindingStatus::kPass;
};

struct StackCheck {
    std::vector<CheckRow> rows;
    std::vector<Finding> findings;  // doctor's stack findings, then recommended.*
};

StackCheck check_stack(const StackData& d, const Snapshot& s, const Recommendation& r);

}  // namespace trainrig::stack

// Runs one rule by id on a snapshot, for rule tests.
#pragma once

#include <gtest/gtest.h>

#include "doctor/rule.h"

namespace trainrig::test {

inline Finding judge_one(const std::string& id, const Snapshot& s, RuleOptions o = {}) {
    const Rule* r = find_rule(id);
    EXPECT_NE(r, nullptr) << id;
    if (!r) return {};
    return run_rule(*r, s, o);
}

inline bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
    for (const auto& l : lines)
        if (l.find(needle) != std::string::npos) return true;
    return false;
}

template <class T>
Fact<T> garbled(const std::string& msg = "/sys/x: expected an integer, found 'x'") {
    return Fact<T>::failed(Status{Errc::kInvalidInput, msg});
}

}  // namespace trainrig::test

#define EXPECT_STATUS(finding, st) \
    EXPECT_EQ((finding).status, FindingStatus::st) << (finding).id << ": " << (finding).summary

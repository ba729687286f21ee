// A Finding: one rule's verdict on one machine, with the evidence it read and the remedy.
// Field meanings are the contract in docs/formats.md ("trainrig.doctor").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace trainrig {

// Ordered by severity for worst_of(): a finding takes the worst status of its parts.
enum class FindingStatus { kPass, kSkip, kWarn, kError, kFail };

std::string_view status_name(FindingStatus s);
FindingStatus worst_of(FindingStatus a, FindingStatus b);

struct Finding {
    std::string id;
    std::string title;
    FindingStatus status = FindingStatus::kPass;
    std::string summary;                // one line
    std::vector<std::string> evidence;  // what was read, and from where
    std::string remedy;                 // what to do, with the command
    std::vector<std::string> refs;      // article sections, documentation
    nlohmann::json data;                // rule-specific table, null when none

    std::string area() const { return id.substr(0, id.find('.')); }
    // Sets status and summary unless a worse status was already set. Every line raised at the
    // worst status is kept: the summary names each affected device (up to three, then a count).
    void raise(FindingStatus s, std::string line);
    bool operator==(const Finding&) const = default;

private:
    std::vector<std::string> worst_lines_;
};

}  // namespace trainrig

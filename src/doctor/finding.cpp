// Finding status names and severity ordering.
#include "doctor/finding.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainrig {

std::string_view status_name(FindingStatus s) {
    switch (s) {
        case FindingStatus::kPass:
            return "pass";
        case FindingStatus::kSkip:
            return "skip";
        case FindingStatus::kWarn:
            return "warn";
        case FindingStatus::kError:
            return "error";
        case FindingStatus::kFail:
            return "fail";
    }
    return "error";
}

FindingStatus worst_of(FindingStatus a, FindingStatus b) { return a > b ? a : b; }

void Finding::raise(FindingStatus s, std::string line) {
    if (s < status && !summary.empty()) return;
    if (s == status && !summary.empty()) {
        // A pass or skip line is a verdict on the whole; problems are listed, each once.
        if (s == FindingStatus::kPass || s == FindingStatus::kSkip) return;
        if (std::find(worst_lines_.begin(), worst_lines_.end(), line) != worst_lines_.end()) return;
        worst_lines_.push_back(std::move(line));
        constexpr size_t kNamed = 3;
        summary = worst_lines_.front();
        for (size_t i = 1; i < std::min(worst_lines_.size(), kNamed); ++i)
            summary += "; " + worst_lines_[i];
        if (worst_lines_.size() > kNamed)
            summary += fmt::format("; and {} more", worst_lines_.size() - kNamed);
        return;
    }
    status = s;
    summary = line;
    worst_lines_ = {std::move(line)};
}

}  // namespace trainrig

// Finding status names and severity ordering.
#include "doctor/finding.h"

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
    if (s == status && !summary.empty()) return;  // keep the first line of the worst kind
    status = s;
    summary = std::move(line);
}

}  // namespace trainrig

#include "validate/lemon.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace trainrig::validate {

std::optional<Lemon> judge_lemon(std::vector<HistoryEntry>& history, const LemonOptions& o) {
    std::stable_sort(
        history.begin(), history.end(),
        [](const HistoryEntry& a, const HistoryEntry& b) { return a.written > b.written; });
    if (history.empty() || history.front().written == 0 || o.drains == 0) return std::nullopt;
    const double window = o.days * 86400;
    Lemon l;
    std::map<std::string, size_t> failed;
    std::string first_named;  // of equally frequent checks, the one failed most recently
    for (const auto& e : history) {
        if (l.reports == o.reports) break;
        if (e.written == 0 || std::difftime(history.front().written, e.written) > window) break;
        ++l.reports;
        if (!e.drained()) continue;
        ++l.drains;
        for (const auto& id : e.failed) ++failed[id];
    }
    if (l.drains < o.drains) return std::nullopt;
    size_t most = 0;
    for (const auto& e : history)  // newest first: ties go to the latest failure
        for (const auto& id : e.failed)
            if (failed.count(id) && failed[id] > most) most = failed[id], l.check = id;
    return l;
}

std::string lemon_detail(const Lemon& l, const LemonOptions& o) {
    return fmt::format("{}: drained in {} of its last {} reports within {:g} days",
                       l.check.empty() ? "(its own verdict)" : l.check, l.drains, l.reports,
                       o.days);
}

std::string lemon_reason(const Lemon& l, const LemonOptions& o) {
    return "lemon " + lemon_detail(l, o);
}

}  // namespace trainrig::validate

#include "health/cached_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/user_file.h"
#include "core/utc_time.h"
#include "validate/report_trust.h"

namespace trainrig::health {

namespace {

namespace fs = std::filesystem;

std::string text_of(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<CachedReport> read_report_json(const std::string& file) {
    auto text = read_user_file(file, "--report", 64u << 20);
    if (!text) return text.status();
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || text_of(j, "schema") != "trainrig.validate")
        return Status(Errc::kInvalidInput,
                      fmt::format("{} is not a trainrig.validate report", file),
                      "pass a report directory written by `trainrig validate`");
    CachedReport r;
    r.path = file;
    r.host = text_of(j, "host");
    r.verdict = text_of(j, "verdict");
    r.finished_at = text_of(j, "finished_at");
    const auto finished = parse_utc_iso8601(r.finished_at);
    if (!finished)
        return Status(Errc::kInvalidInput,
                      fmt::format("{} has no finished_at time (a report cut short?)", file));
    r.finished = *finished;
    // An interrupted run is never a reason to drain; a report changed since validate wrote it
    // is not validate's word.
    r.incomplete = validate::report_incomplete(j);
    r.changed = validate::report_changes(file);
    if (r.incomplete || !r.changed.empty()) return r;
    if (const auto it = j.find("items"); it != j.end() && it->is_array())
        for (const auto& item : *it) {
            if (!item.is_object() || text_of(item, "level") != "fail") continue;
            r.failed_checks.push_back(text_of(item, "id"));
            if (text_of(item, "stage") != "doctor")
                r.failed.push_back({text_of(item, "id"), text_of(item, "summary")});
        }
    return r;
}

}  // namespace

Result<std::vector<CachedReport>> read_cached_reports(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    auto one = [](Result<CachedReport> r) -> Result<std::vector<CachedReport>> {
        if (!r) return r.status();
        return std::vector<CachedReport>{std::move(r).value()};
    };
    if (fs::is_regular_file(p, ec)) return one(read_report_json(path));
    if (!fs::is_directory(p, ec))
        return Status(Errc::kNotFound, fmt::format("no validate report at {}", path));
    if (fs::is_regular_file(p / "report.json", ec)) return one(read_report_json(p / "report.json"));
    // A folder of report directories. One unreadable report does not hide the others, but is not
    // skipped silently when it is the only one.
    std::vector<CachedReport> out;
    Status last_error(Errc::kNotFound, fmt::format("no validate report in {}", path),
                      "write one with `trainrig validate --report DIR` under it");
    for (const auto& entry : fs::directory_iterator(p, ec)) {
        const fs::path file = entry.path() / "report.json";
        if (!fs::is_regular_file(file, ec)) continue;
        auto r = read_report_json(file);
        if (!r) {
            last_error = r.status();
            continue;
        }
        out.push_back(std::move(r).value());
    }
    if (ec) return Status(Errc::kIo, fmt::format("cannot list {}: {}", path, ec.message()));
    if (out.empty()) return last_error;
    return out;
}

const CachedReport& newest_report(const std::vector<CachedReport>& reports) {
    const CachedReport* newest = &reports.front();
    for (const auto& r : reports)
        if (validate::report_supersedes(r.incomplete, r.finished, newest->incomplete,
                                        newest->finished))
            newest = &r;
    return *newest;
}

Result<CachedReport> read_cached_report(const std::string& path) {
    auto all = read_cached_reports(path);
    if (!all) return all.status();
    return newest_report(*all);
}

}  // namespace trainrig::health

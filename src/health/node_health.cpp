#include "health/node_health.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/utc_time.h"
#include "health/cached_report.h"
#include "validate/lemon.h"

namespace trainrig::health {

const std::vector<std::string>& health_check_ids() {
    static const std::vector<std::string> ids = {
        "pci.gpu-visible",   "pci.gpu-bar",     "pci.gpu-link",      "mem.ecc",
        "driver.nvidia",     "gpu.count",       "gpu.ecc",           "gpu.remapped-rows",
        "gpu.retired-pages", "gpu.temperature", "gpu.clock-events",  "gpu.pcie-link",
        "gpu.pcie-replay",   "gpu.nvlink",      "stack.cuda-driver", "stack.fabric-manager",
        "kmsg.xid",          "kmsg.pcie-aer",
    };
    return ids;
}

const char* health_name(Health h) {
    switch (h) {
        case Health::kHealthy:
            return "healthy";
        case Health::kUnhealthy:
            return "unhealthy";
        case Health::kUnknown:
            return "unknown";
    }
    return "unknown";
}

int health_exit_code(Health h) {
    return h == Health::kHealthy ? 0 : h == Health::kUnhealthy ? 1 : 2;
}

namespace {

// A lemon (validate/lemon.h): this host's whole reports, judged as fleet judge judges them.
void add_lemon(const std::vector<CachedReport>& all, const CachedReport& latest,
               HealthResult& result) {
    std::vector<validate::HistoryEntry> history;
    for (const auto& r : all)
        if (r.host == latest.host && !r.incomplete && r.changed.empty())
            history.push_back({r.path, r.finished_at, r.finished, r.verdict, r.failed_checks});
    const validate::LemonOptions lemon_options;
    if (auto lemon = validate::judge_lemon(history, lemon_options))
        result.failures.push_back({"lemon", validate::lemon_detail(*lemon, lemon_options)});
}

// The latest validate report's failed measurements, when it is this node's and recent enough;
// and whether the host's reports there make it a lemon.
void add_report(const HealthOptions& options, HealthResult& result) {
    auto all = read_cached_reports(options.report);
    if (!all) {
        if (all.status().code() == Errc::kNotFound)
            result.notes.push_back(all.status().message() + ": doctor's checks only");
        else
            result.unknowns.push_back({"report", all.status().message()});
        return;
    }
    const CachedReport* report = &newest_report(*all);
    const std::time_t now = options.now ? options.now : std::time(nullptr);
    if (!result.host.empty() && !report->host.empty() && report->host != result.host) {
        result.unknowns.push_back({"report", fmt::format("{} is about host {}, not {}",
                                                         report->path, report->host, result.host)});
        return;
    }
    const double age = std::difftime(now, report->finished);
    if (age > options.max_report_age) {
        result.notes.push_back(fmt::format(
            "{} finished {} ({:.1f} days ago), older than the {:.1f} days allowed: not used",
            report->path, report->finished_at, age / 86400, options.max_report_age / 86400));
        return;
    }
    if (!report->changed.empty()) {
        result.unknowns.push_back({"report", fmt::format("{}: {} (`trainrig report verify`)",
                                                         report->path, report->changed)});
        return;
    }
    if (report->incomplete) {
        result.notes.push_back(fmt::format(
            "{} is of an interrupted validate (finished {}): not used; run validate again",
            report->path, report->finished_at));
        return;
    }
    result.notes.push_back(fmt::format("{} (validate {}, finished {})", report->path,
                                       report->verdict, report->finished_at));
    add_lemon(*all, *report, result);
    for (const auto& p : report->failed) result.failures.push_back(p);
}

}  // namespace

Result<HealthResult> check_health(const HealthOptions& options) {
    CollectOptions collect = options.collect;
    collect.torch = false;  // importing metadata of PyTorch is for the stack checks, not health
    auto snap = collect_snapshot(collect);
    if (!snap) return snap.status();

    HealthResult result;
    result.host = snap->host.hostname.is_known() ? snap->host.hostname.value() : std::string();
    Selection selection = options.selection;
    if (selection.only.empty()) selection.only = health_check_ids();
    RuleOptions rule_options;
    if (options.expect_gpus >= 0) rule_options.expect_gpus = options.expect_gpus;
    for (const auto& f : judge(*snap, rule_options, selection)) {
        ++result.checks;
        result.judged.push_back(f.id);
        if (f.status == FindingStatus::kFail) result.failures.push_back({f.id, f.summary});
        if (f.status == FindingStatus::kError) result.unknowns.push_back({f.id, f.summary});
        if (f.status == FindingStatus::kSkip) ++result.not_applicable;
    }
    if (!options.report.empty()) add_report(options, result);
    result.health = !result.failures.empty()   ? Health::kUnhealthy
                    : !result.unknowns.empty() ? Health::kUnknown
                                               : Health::kHealthy;
    result.judged_at = options.now != 0 ? options.now : std::time(nullptr);
    if (auto window = active_maintenance(options.collect.root, result.judged_at); !window)
        result.notes.push_back(window.status().message() + "; judged as if there were none");
    else
        result.maintenance = *window;
    return result;
}

int scheduler_exit_code(const HealthResult& r) {
    return r.maintenance ? 0 : health_exit_code(r.health);
}

nlohmann::json health_json(const HealthResult& r) {
    auto problems = [](const std::vector<Problem>& list) {
        auto out = nlohmann::json::array();
        for (const auto& p : list) out.push_back({{"id", p.id}, {"detail", p.detail}});
        return out;
    };
    return {
        {"health", health_name(r.health)},
        {"host", r.host},
        {"checks", r.checks},
        {"judged", r.judged},
        {"not_applicable", r.not_applicable},
        {"failures", problems(r.failures)},
        {"unknowns", problems(r.unknowns)},
        {"notes", r.notes},
        {"maintenance", r.maintenance ? nlohmann::json{{"until", utc_iso8601(r.maintenance->until)},
                                                       {"reason", r.maintenance->reason},
                                                       {"by", r.maintenance->by}}
                                      : nlohmann::json(nullptr)}};
}

std::string render_problems(const HealthResult& r) {
    std::string out;
    for (const auto& p : r.failures) out += "  failed: " + problem_line(p, 200) + "\n";
    for (const auto& p : r.unknowns) out += "  could not judge: " + problem_line(p, 200) + "\n";
    for (const auto& n : r.notes) out += "  report: " + n + "\n";
    return out;
}

std::string checks_text(const HealthResult& r) {
    const size_t judged = r.checks - std::min(r.not_applicable, r.checks);
    std::string out = fmt::format("{} check{} {}", judged, judged == 1 ? "" : "s",
                                  r.health == Health::kHealthy ? "passed" : "run");
    if (r.not_applicable > 0) out += fmt::format(", {} not applicable", r.not_applicable);
    return out;
}

std::string problem_line(const Problem& p, size_t max_chars) {
    std::string line = p.detail.empty() ? p.id : p.id + " " + p.detail;
    for (char& c : line)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (line.size() <= max_chars) return line;
    size_t cut = max_chars >= 3 ? max_chars - 3 : 0;
    // Never split a UTF-8 sequence: back up to the start of the character.
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    return line.substr(0, cut) + (max_chars >= 3 ? "..." : "");
}

}  // namespace trainrig::health

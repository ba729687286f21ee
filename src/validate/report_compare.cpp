#include "validate/report_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "core/quantity.h"
#include "core/text.h"
#include "core/user_file.h"
#include "measure/baseline.h"
#include "measure/bench_document.h"
#include "validate/report_builder.h"

namespace trainrig::validate {

namespace {

int verdict_rank(const std::string& v) {
    if (v == "READY") return 0;
    if (v == "READY WITH WARNINGS") return 1;
    if (v == "UNKNOWN") return 2;
    return 3;  // NOT READY
}

// An item is the same finding when its id and devices are.
std::string item_key(const nlohmann::json& item) {
    std::string key = item.value("id", "");
    if (auto d = item.find("devices"); d != item.end() && d->is_array())
        for (const auto& x : *d)
            if (x.is_string()) key += "\n" + x.get<std::string>();
    return key;
}

std::map<std::string, nlohmann::json> items_by_key(const nlohmann::json& report) {
    std::map<std::string, nlohmann::json> out;
    if (auto items = report.find("items"); items != report.end() && items->is_array())
        for (const auto& i : *items)
            if (i.is_object()) out.emplace(item_key(i), i);
    return out;
}

// The required checks a report did not judge (coverage.missing), sorted; none for a report
// without coverage (schema version 1).
std::optional<std::vector<std::string>> missing_checks(const nlohmann::json& report) {
    const auto c = report.find("coverage");
    if (c == report.end() || !c->is_object()) return std::nullopt;
    const auto m = c->find("missing");
    if (m == c->end() || !m->is_array()) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& id : *m)
        if (id.is_string()) out.push_back(id.get<std::string>());
    std::sort(out.begin(), out.end());
    return out;
}

// The measurements of a report's bench document, with samples; none for a report without one
// (a machine tree, or a run interrupted before the measurements).
std::vector<bench::BenchRecord> records_of(const nlohmann::json& report) {
    std::vector<bench::BenchRecord> out;
    const auto b = report.find("bench");
    if (b == report.end() || !b->is_object()) return out;
    const auto results = b->find("results");
    if (results == b->end() || !results->is_array()) return out;
    for (const auto& j : *results)
        if (auto r = bench::record_from_json(j); r.ok() && !r->samples.empty())
            out.push_back(std::move(r).value());
    return out;
}

std::string devices_of(const bench::BenchRecord& r) {
    std::vector<std::string> parts;
    if (auto g = r.target.find("gpu"); g != r.target.end() && g->is_number_integer())
        parts.push_back(fmt::format("GPU {}", g->get<int>()));
    if (auto d = r.target.find("device"); d != r.target.end() && d->is_string())
        parts.push_back(d->get<std::string>());
    return join(parts, ", ");
}

nlohmann::json move_json(const MeasurementMove& m) {
    return {{"id", m.id},
            {"devices", m.devices},
            {"unit", m.unit},
            {"old_median", m.old_median},
            {"new_median", m.new_median},
            {"ratio", m.old_median > 0 ? m.new_median / m.old_median : 0.0},
            {"verdict", bench::verdict_name(m.verdict)}};
}

}  // namespace

Result<nlohmann::json> load_report(const std::string& path) {
    std::error_code ec;
    const std::string file = std::filesystem::is_directory(path, ec)
                                 ? (std::filesystem::path(path) / "report.json").string()
                                 : path;
    auto text = read_user_file(file, "report", size_t{256} << 20);
    if (!text) return text.status();
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return Status{Errc::kInvalidInput, fmt::format("{}: not a JSON object", file)};
    if (doc.value("schema", "") != "trainrig.validate")
        return Status{Errc::kInvalidInput,
                      fmt::format("{}: not a trainrig.validate report (`trainrig validate` "
                                  "writes one)",
                                  file)};
    const int version = doc.value("schema_version", 0);
    if (version < 1 || version > kReportSchemaVersion)
        return Status{
            Errc::kInvalidInput,
            fmt::format("{}: schema_version {} is not one this trainrig reads (1 to {})", file,
                        doc.contains("schema_version") ? doc["schema_version"].dump()
                                                       : std::string("(none)"),
                        kReportSchemaVersion)};
    return doc;
}

ReportDiff diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report,
                        const bench::Thresholds& tolerance) {
    ReportDiff d;
    const auto host = [](const nlohmann::json& r) {
        const auto it = r.find("host");
        return it != r.end() && it->is_string() ? it->get<std::string>() : std::string("unknown");
    };
    d.old_host = host(old_report);
    d.new_host = host(new_report);
    d.old_verdict = old_report.value("verdict", "UNKNOWN");
    d.new_verdict = new_report.value("verdict", "UNKNOWN");
    d.verdict_change = verdict_rank(d.new_verdict) - verdict_rank(d.old_verdict);
    if (auto old_missing = missing_checks(old_report), new_missing = missing_checks(new_report);
        old_missing && new_missing) {
        d.coverage_compared = true;
        std::set_difference(new_missing->begin(), new_missing->end(), old_missing->begin(),
                            old_missing->end(), std::back_inserter(d.unjudged_now));
        std::set_difference(old_missing->begin(), old_missing->end(), new_missing->begin(),
                            new_missing->end(), std::back_inserter(d.judged_again));
    }
    const auto old_items = items_by_key(old_report), new_items = items_by_key(new_report);
    for (const auto& [k, i] : new_items)
        if (!old_items.count(k)) d.appeared.push_back(i);
    for (const auto& [k, i] : old_items)
        if (!new_items.count(k)) d.resolved.push_back(i);

    // The old report's medians are the new one's expectations, as `--baseline` makes them.
    nlohmann::json old_bench = old_report.value("bench", nlohmann::json::object());
    std::set<std::string> new_keys;
    auto now = records_of(new_report);
    // A measurement cut short by a stop request is evidence, not a figure to compare.
    d.cut_short = static_cast<size_t>(std::erase_if(now, [](const auto& r) { return r.partial; }));
    for (const auto& r : now) new_keys.insert(bench::record_key(r));
    for (const auto& r : records_of(old_report))
        if (bench::higher_is_better(r) && !new_keys.count(bench::record_key(r))) ++d.only_old;
    if (auto baseline = bench::baseline_from_document(old_bench, "the old report"); baseline) {
        for (auto& r : now) {
            r.expected.reset();
            r.expected_floor = false;
            const auto it = baseline->medians.find(bench::record_key(r));
            if (it == baseline->medians.end()) {
                if (bench::higher_is_better(r)) ++d.only_new;
                continue;
            }
            ++d.compared;
            std::vector<bench::BenchRecord> one = {r};
            bench::apply_baseline(one, *baseline);
            MeasurementMove m{
                "bench." + r.bench + "." + r.name, devices_of(r), r.unit, it->second, r.median(),
                bench::judge(one[0], tolerance)};
            if (m.verdict == bench::Verdict::kWarn || m.verdict == bench::Verdict::kFail)
                d.slower.push_back(m);
            else if (it->second > 0 && r.median() * tolerance.pass > it->second)
                d.faster.push_back(m);  // the old is below the new's tolerance band: it moved
            else
                d.steady.push_back(m);
        }
    } else {
        for (const auto& r : now) d.only_new += bench::higher_is_better(r) ? 1 : 0;
    }
    return d;
}

std::vector<std::string> ReportDiff::worse_parts() const {
    std::vector<std::string> parts;
    if (verdict_change > 0) parts.push_back("the verdict");
    if (!appeared.empty())
        parts.push_back(
            fmt::format("{} item{} appeared", appeared.size(), appeared.size() == 1 ? "" : "s"));
    if (!slower.empty())
        parts.push_back(
            fmt::format("{} measurement{} slower", slower.size(), slower.size() == 1 ? "" : "s"));
    if (!unjudged_now.empty())
        parts.push_back(fmt::format("{} required check{} no longer judged", unjudged_now.size(),
                                    unjudged_now.size() == 1 ? "" : "s"));
    return parts;
}

nlohmann::json diff_json(const ReportDiff& d) {
    nlohmann::json slower = nlohmann::json::array(), faster = nlohmann::json::array();
    for (const auto& m : d.slower) slower.push_back(move_json(m));
    for (const auto& m : d.faster) faster.push_back(move_json(m));
    return {{"schema", "trainrig.report.diff"},
            {"schema_version", 1},
            {"old_host", d.old_host},
            {"new_host", d.new_host},
            {"same_host", d.old_host == d.new_host},
            {"old_verdict", d.old_verdict},
            {"new_verdict", d.new_verdict},
            {"verdict_change", d.verdict_change < 0   ? "better"
                               : d.verdict_change > 0 ? "worse"
                                                      : "same"},
            {"worse", d.worse()},
            {"appeared", d.appeared},
            {"resolved", d.resolved},
            {"slower", slower},
            {"faster", faster},
            {"measurements_compared", d.compared},
            {"measurements_only_old", d.only_old},
            {"measurements_only_new", d.only_new},
            {"measurements_cut_short", d.cut_short},
            {"coverage", d.coverage_compared ? nlohmann::json{{"not_judged_now", d.unjudged_now},
                                                              {"judged_again", d.judged_again}}
                                             : nlohmann::json(nullptr)}};
}

std::string render_diff_text(const ReportDiff& d, bool verbose) {
    std::string out =
        d.old_host == d.new_host
            ? ""
            : fmt::format("hosts: {} -> {} (two machines compared, not one over time)\n",
                          d.old_host, d.new_host);
    out += d.verdict_change == 0
               ? fmt::format("verdict: {} (unchanged)\n", d.new_verdict)
               : fmt::format("verdict: {} -> {} ({})\n", d.old_verdict, d.new_verdict,
                             d.verdict_change > 0 ? "worse" : "better");
    auto items = [&](const char* title, const std::vector<nlohmann::json>& list) {
        if (list.empty()) return;
        out += fmt::format("\n{} ({}):\n", title, list.size());
        for (const auto& i : list) {
            std::vector<std::string> devices;
            for (const auto& x : i.value("devices", nlohmann::json::array()))
                if (x.is_string()) devices.push_back(x.get<std::string>());
            out += fmt::format("  {:<7} {}{}: {}\n", i.value("level", ""), i.value("id", ""),
                               devices.empty() ? "" : " [" + join(devices, ", ") + "]",
                               i.value("summary", ""));
        }
    };
    items("appeared", d.appeared);
    items("resolved", d.resolved);
    auto moves = [&](const char* title, const std::vector<MeasurementMove>& list) {
        if (list.empty()) return;
        out += fmt::format("\n{} ({}):\n", title, list.size());
        for (const auto& m : list)
            out += fmt::format("  {}{}: {} -> {} ({:.0f} %)\n", m.id,
                               m.devices.empty() ? "" : " [" + m.devices + "]",
                               format_quantity(m.old_median, m.unit),
                               format_quantity(m.new_median, m.unit),
                               100 * m.new_median / m.old_median);
    };
    auto checks = [&](const char* title, const std::vector<std::string>& list) {
        if (!list.empty())
            out += fmt::format("\n{} ({}): {}\n", title, list.size(), join(list, ", "));
    };
    checks("required checks not judged now, judged before", d.unjudged_now);
    checks("required checks judged again", d.judged_again);
    moves("slower than before by more than the tolerance", d.slower);
    moves("faster than before by more than the tolerance", d.faster);
    if (verbose) moves("within the tolerance of before", d.steady);
    out += fmt::format("\n{} measurement(s) compared", d.compared);
    if (d.only_old || d.only_new)
        out += fmt::format(
            ", {} only in the old report, {} only in the new (another level, "
            "GPU selection or data folder)",
            d.only_old, d.only_new);
    if (d.cut_short)
        out += fmt::format(", {} cut short by a stop request (not compared)", d.cut_short);
    // One conclusion that agrees with the verdict line: a better verdict with something new
    // and worse is mixed, not better and not plainly worse.
    const std::string worse = join(d.worse_parts(), ", ");
    if (!d.worse())
        out += "\nnothing worse than before\n";
    else if (d.verdict_change < 0)
        out += "\nmixed: the verdict is better, but " + worse + "\n";
    else
        out += "\nworse than before: " + worse + "\n";
    return out;
}

}  // namespace trainrig::validate

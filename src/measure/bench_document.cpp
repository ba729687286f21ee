#include "measure/bench_document.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/quantity.h"
#include "core/version.h"

namespace trainrig::bench {

int BenchRun::exit_code() const {
    if (!errors.empty() || unavailable) return 2;
    for (const auto& r : records)
        if (judge(r, thresholds) == Verdict::kFail) return 1;
    return 0;
}

nlohmann::json record_json(const BenchRecord& r, const Thresholds& t) {
    nlohmann::json j = {{"bench", r.bench},
                        {"name", r.name},
                        {"params", r.params},
                        {"target", r.target},
                        {"unit", r.unit},
                        {"samples", r.samples},
                        {"median", r.median()},
                        {"min", r.min()},
                        {"max", r.max()},
                        {"cv", r.cv()},
                        {"counted", r.counted},
                        {"expected", nullptr},
                        {"expected_source", nullptr},
                        {"expected_floor", false},
                        {"no_expectation", nullptr},
                        {"ratio", nullptr}};
    if (r.expected) {
        j["expected"] = *r.expected;
        j["expected_source"] = r.expected_source;
        j["expected_floor"] = r.expected_floor;
    } else if (!r.no_expectation.empty()) {
        j["no_expectation"] = r.no_expectation;
    }
    if (const auto q = ratio(r)) j["ratio"] = *q;
    j["verified"] = r.verified ? nlohmann::json(*r.verified) : nlohmann::json(nullptr);
    j["verify_detail"] = r.verify_detail;
    j["partial"] = r.partial;
    j["status"] = verdict_name(judge(r, t));
    return j;
}

Result<BenchRecord> record_from_json(const nlohmann::json& j) {
    const auto bad = [](const std::string& what) {
        return Status{Errc::kInvalidInput, fmt::format("a bench record {}", what)};
    };
    if (!j.is_object()) return bad("is not a JSON object");
    BenchRecord r;
    for (const auto& [key, field] :
         {std::pair{"bench", &r.bench}, std::pair{"name", &r.name}, std::pair{"unit", &r.unit}}) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_string()) return bad(fmt::format("has no \"{}\" string", key));
        *field = it->get<std::string>();
    }
    const auto samples = j.find("samples");
    if (samples == j.end() || !samples->is_array()) return bad("has no \"samples\" array");
    for (const auto& s : *samples) {
        if (!s.is_number()) return bad("has a sample that is not a number");
        r.samples.push_back(s.get<double>());
    }
    for (const auto& [key, field] : {std::pair{"params", &r.params}, std::pair{"target", &r.target},
                                     std::pair{"counted", &r.counted}})
        if (const auto it = j.find(key); it != j.end() && it->is_object()) *field = *it;
    if (const auto it = j.find("verified"); it != j.end() && it->is_boolean())
        r.verified = it->get<bool>();
    if (const auto it = j.find("verify_detail"); it != j.end() && it->is_string())
        r.verify_detail = it->get<std::string>();
    if (const auto it = j.find("partial"); it != j.end() && it->is_boolean())
        r.partial = it->get<bool>();
    return r;
}

nlohmann::json bench_document(const BenchRun& run) {
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json summary = {
        {"pass", 0}, {"warn", 0}, {"fail", 0}, {"info", 0}, {"incomplete", 0}};
    for (const auto& r : run.records) {
        results.push_back(record_json(r, run.thresholds));
        summary[verdict_name(judge(r, run.thresholds))] =
            summary[verdict_name(judge(r, run.thresholds))].get<int>() + 1;
    }
    const auto notes = [](const std::vector<BenchRun::Note>& list, const char* key) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& n : list) a.push_back({{"bench", n.bench}, {key, n.text}});
        return a;
    };
    summary["skipped"] = run.skipped.size();
    summary["errors"] = run.errors.size();
    return {{"schema", "trainrig.bench"},
            {"schema_version", 3},
            {"trainrig_version", kTrainrigVersion},
            {"thresholds", {{"pass", run.thresholds.pass}, {"warn", run.thresholds.warn}}},
            {"machine", run.machine},
            {"results", results},
            {"skipped", notes(run.skipped, "reason")},
            {"errors", notes(run.errors, "error")},
            {"summary", summary},
            {"exit_code", run.exit_code()}};
}

namespace {

std::string compact(const nlohmann::json& object) {
    std::string out;
    for (const auto& [k, v] : object.items())
        out += fmt::format("{}{}={}", out.empty() ? "" : " ", k,
                           v.is_string() ? v.get<std::string>() : v.dump());
    return out;
}

}  // namespace

std::string render_bench_text(const BenchRun& run, bool verbose) {
    std::string out =
        fmt::format("{:<10} {:<14} {:<16} {:>15} {:>15} {:>6} {:>6}  {}\n", "bench", "measurement",
                    "target", "median", "expected", "ratio", "cv", "status");
    for (const auto& r : run.records) {
        const auto q = ratio(r);
        const Verdict v = judge(r, run.thresholds);
        std::string status = verdict_name(v);
        if (r.partial)
            status += " (stopped before it finished: not judged)";
        else if (r.verified && !*r.verified)
            status += " (wrong data: " + r.verify_detail + ")";
        out += fmt::format("{:<10} {:<14} {:<16} {:>15} {:>15} {:>6} {:>5.1f}%  {}\n", r.bench,
                           r.name, compact(r.target), format_quantity(r.median(), r.unit),
                           r.expected ? format_quantity(*r.expected, r.unit) : "-",
                           q ? fmt::format("{:.2f}", *q) : "-", 100 * r.cv(), status);
        out += fmt::format("{:<10} {}\n", "", compact(r.params));
        if (!r.expected && !r.no_expectation.empty())
            out += fmt::format("{:<10} no expected value: {}\n", "", r.no_expectation);
        if (verbose) {
            std::string samples;
            for (double sample : r.samples)
                samples += (samples.empty() ? "" : ", ") + format_quantity(sample, r.unit);
            out += fmt::format("{:<10} samples: {}\n", "", samples);
        }
    }
    for (const auto& s : run.skipped) out += fmt::format("{:<10} skipped: {}\n", s.bench, s.text);
    for (const auto& e : run.errors) out += fmt::format("{:<10} error: {}\n", e.bench, e.text);
    std::string sources;
    std::set<std::string> shown;
    for (const auto& r : run.records)
        if (r.expected && shown.insert(r.expected_source).second)
            sources += fmt::format("  {} {}: {}\n", r.bench, r.name, r.expected_source);
    if (!sources.empty()) out += "expected values from:\n" + sources;
    return out;
}

}  // namespace trainrig::bench

#include "measure/baseline.h"

#include <fmt/format.h>

#include "core/user_file.h"
#include "measure/bench_document.h"

namespace trainrig::bench {

std::string record_key(const BenchRecord& r) {
    return r.bench + '\n' + r.name + '\n' + r.params.dump() + '\n' + r.target.dump();
}

Result<Baseline> parse_baseline(const std::string& text, const std::string& path) {
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded())
        return Status{Errc::kInvalidInput, fmt::format("--baseline {}: not JSON", path)};
    return baseline_from_document(doc, path);
}

Result<Baseline> baseline_from_document(const nlohmann::json& doc, const std::string& path) {
    const auto bad = [&](const std::string& what) {
        return Status{Errc::kInvalidInput, fmt::format("--baseline {}: {}", path, what)};
    };
    const auto schema = doc.is_object() ? doc.find("schema") : doc.end();
    if (!doc.is_object() || schema == doc.end() || *schema != "trainrig.bench")
        return bad("not a trainrig.bench document (`trainrig bench run --json`)");
    const auto version = doc.find("schema_version");
    // Version 3 renamed a per-step key only: the medians of a version 2 document mean the same.
    if (version == doc.end() || (*version != 2 && *version != 3))
        return bad(
            fmt::format("schema_version {} is not 2 or 3; run the baseline again with this "
                        "trainrig",
                        version == doc.end() ? "(none)" : version->dump()));
    const auto results = doc.find("results");
    if (results == doc.end() || !results->is_array()) return bad("has no \"results\" array");
    Baseline b;
    b.path = path;
    for (size_t i = 0; i < results->size(); ++i) {
        auto r = record_from_json((*results)[i]);
        if (!r) return bad(fmt::format("results[{}]: {}", i, r.status().message()));
        // A measurement cut short is not a figure to hold this machine to.
        if (r->samples.empty() || r->partial || !higher_is_better(*r)) continue;
        b.medians[record_key(*r)] = r->median();
    }
    return b;
}

Result<Baseline> load_baseline(const std::string& path) {
    auto text = read_user_file(path, "--baseline", size_t{64} << 20);
    if (!text) return text.status();
    return parse_baseline(*text, path);
}

size_t apply_baseline(std::vector<BenchRecord>& records, const Baseline& baseline) {
    size_t matched = 0;
    for (auto& r : records) {
        // An emulated device's timings are the host's: no figure holds it to anything.
        if (!higher_is_better(r) || on_emulated_gpu(r)) continue;
        const auto it = baseline.medians.find(record_key(r));
        if (it == baseline.medians.end()) continue;
        r.expected = it->second;
        r.expected_floor = false;  // a baseline is a typical figure: the tolerance applies
        r.expected_source = fmt::format("median of the same measurement in {}", baseline.path);
        r.no_expectation.clear();
        ++matched;
    }
    return matched;
}

}  // namespace trainrig::bench

#include "fleet/pair_input.h"

#include <fmt/format.h>

#include <map>

#include "core/user_file.h"
#include "measure/bench_document.h"

namespace trainrig::fleet {

namespace {

using nlohmann::json;

constexpr const char* kPairsNextStep = "see docs/formats.md, \"Node pairs: trainrig.fleet.pairs\"";

Status pairs_refusal(const std::string& source, const std::string& what) {
    return {Errc::kInvalidInput, fmt::format("{}: {}", source, what), kPairsNextStep};
}

Result<std::vector<bench::PairResult>> pair_list(const json& doc, const char* member,
                                                 const std::map<std::string, int>& index,
                                                 const std::string& source) {
    std::vector<bench::PairResult> out;
    const auto it = doc.find(member);
    if (it == doc.end() || it->is_null()) return out;
    if (!it->is_array()) return pairs_refusal(source, fmt::format("'{}' is not an array", member));
    for (size_t i = 0; i < it->size(); ++i) {
        const json& e = (*it)[i];
        const std::string where = fmt::format("{}[{}]", member, i);
        if (!e.is_object() || !e.contains("nodes") || !e["nodes"].is_array() ||
            e["nodes"].size() != 2 || !e["nodes"][0].is_string() || !e["nodes"][1].is_string())
            return pairs_refusal(source, where + " has no \"nodes\": [two node names]");
        if (!e.contains("value") || !e["value"].is_number() || !(e["value"].get<double>() > 0))
            return pairs_refusal(source, where + " has no positive \"value\"");
        int ends[2];
        for (int k = 0; k < 2; ++k) {
            const std::string name = e["nodes"][k].get<std::string>();
            const auto found = index.find(name);
            if (found == index.end())
                return pairs_refusal(source, fmt::format("{} names {}, which is not among the "
                                                         "nodes judged",
                                                         where, name));
            ends[k] = found->second;
        }
        if (ends[0] == ends[1]) return pairs_refusal(source, where + " names one node twice");
        out.push_back(
            {{std::min(ends[0], ends[1]), std::max(ends[0], ends[1])}, e["value"].get<double>()});
    }
    return out;
}

// `bench run nccl-pairs --json`: a trainrig.bench document with one record per pair measured
// (params.nodes, params.retest), read as the trainrig.fleet.pairs document it amounts to. A pair
// whose measurement failed is left out, as the benchmark's own judgement leaves it out.
json pairs_of_bench(const json& bench) {
    json pairs = json::array(), retests = json::array();
    for (const auto& j : bench.value("results", json::array())) {
        auto r = bench::record_from_json(j);
        if (!r.ok() || r->bench != "nccl-pairs" || r->name != "all_reduce" || r->samples.empty())
            continue;
        if (r->counted.is_object() && r->counted.value("failed", false)) continue;
        const json p = r->params.is_object() ? r->params : json::object();
        (p.value("retest", false) ? retests : pairs)
            .push_back({{"nodes", p.value("nodes", json())}, {"value", r->median()}});
    }
    return {{"schema", kPairsSchema},
            {"schema_version", 1},
            {"measurement", "nccl-pairs all_reduce busbw"},
            {"unit", "bytes/s"},
            {"pairs", pairs},
            {"retests", retests}};
}

}  // namespace

Result<FleetPairs> pairs_from_json(const json& doc, const std::vector<NodeInput>& nodes,
                                   const std::string& source) {
    if (doc.is_object() && doc.value("schema", "") == "trainrig.bench")
        return pairs_from_json(pairs_of_bench(doc), nodes, source);
    if (!doc.is_object() || doc.value("schema", "") != kPairsSchema)
        return pairs_refusal(source, fmt::format("neither a {} document nor `bench run "
                                                 "nccl-pairs --json`",
                                                 kPairsSchema));
    if (doc.value("schema_version", 0) != 1)
        return pairs_refusal(source, "schema_version is not 1, the version this trainrig reads");
    std::map<std::string, int> index;
    for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].name, static_cast<int>(i));
    FleetPairs p;
    p.source = source;
    if (doc.contains("measurement") && doc["measurement"].is_string())
        p.label = doc["measurement"].get<std::string>();
    if (doc.contains("unit") && doc["unit"].is_string()) p.unit = doc["unit"].get<std::string>();
    if (!doc.contains("pairs")) return pairs_refusal(source, "no \"pairs\" member");
    auto results = pair_list(doc, "pairs", index, source);
    if (!results) return results.status();
    auto retests = pair_list(doc, "retests", index, source);
    if (!retests) return retests.status();
    p.results = std::move(results).value();
    p.retests = std::move(retests).value();
    return p;
}

Result<FleetPairs> load_pairs(const std::string& path, const std::vector<NodeInput>& nodes) {
    auto text = read_user_file(path, "--pairs");
    if (!text) return text.status();
    const json doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded()) return pairs_refusal(path, "not a JSON document (truncated?)");
    return pairs_from_json(doc, nodes, path);
}

}  // namespace trainrig::fleet

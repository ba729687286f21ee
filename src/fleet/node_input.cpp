#include "fleet/node_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "core/user_file.h"
#include "core/utc_time.h"
#include "doctor/report.h"
#include "hw/snapshot_gpus.h"
#include "measure/bench_document.h"
#include "snapshot/snapshot.h"
#include "validate/coverage.h"
#include "validate/report_items.h"
#include "validate/report_trust.h"
#include "validate/validate_run.h"
#include "validate/verdict.h"
#include "validate/versions.h"

namespace trainrig::fleet {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string text_of(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "";
    return v.dump();
}

void add_versions(const json& versions, NodeInput& n) {
    if (!versions.is_object()) return;
    for (const auto& [k, v] : versions.items())
        if (k != "trainrig" && !text_of(v).empty()) n.versions[k] = text_of(v);
}

// "8 x NVIDIA H100 80GB HBM3": counts of each distinct value, in a stable order.
std::string tally(const std::vector<std::string>& values) {
    std::map<std::string, int> counts;
    for (const auto& v : values) ++counts[v];
    std::vector<std::string> parts;
    for (const auto& [v, c] : counts) parts.push_back(fmt::format("{} x {}", c, v));
    return join(parts, ", ");
}

// The hardware and settings a snapshot shows: what should be the same on every node of a fleet.
void add_machine(const Snapshot& s, NodeInput& n) {
    if (s.nvml.is_known()) {
        std::vector<std::string> names, links;
        for (const auto& g : s.nvml.value().gpus) {
            names.push_back(g.name.is_known() ? g.name.value() : "unnamed GPU");
            // The generation the link can train to, not the one it runs at: an idle GPU drops
            // its link to Gen1 to save power, and doctor judges a slow link under load
            // (gpu.pcie-link). A narrower link is a fault at any load.
            if (g.pcie.gen_max.is_known() && g.pcie.width.is_known())
                links.push_back(
                    fmt::format("Gen{} x{}", g.pcie.gen_max.value(), g.pcie.width.value()));
        }
        n.shape["gpus"] = names.empty() ? "none" : tally(names);
        if (!links.empty()) n.shape["gpu_links"] = tally(links);
    }
    // Counted on the bus too, so that a node whose driver did not answer is compared on what was
    // read (its GPUs are there) rather than on a "gpus" no other node has (a hung NVML is not a
    // missing GPU; its own verdict says UNKNOWN).
    if (s.pci_devices.is_known())
        n.shape["gpus_on_pci_bus"] = std::to_string(select_gpus(s).gpus.size());
    if (s.nics.is_known()) {
        size_t ib = 0;
        for (const auto& nic : s.nics.value())
            ib += std::any_of(nic.names.begin(), nic.names.end(),
                              [](const std::string& x) { return x.starts_with("mlx"); });
        n.shape["nics"] = std::to_string(s.nics.value().size());
        n.shape["infiniband"] = std::to_string(ib);
    }
    if (s.memory.total_bytes.is_known())
        n.shape["memory"] =
            fmt::format("{} GiB", (s.memory.total_bytes.value() + (1ull << 29)) >> 30);
    const KernelSettings& k = s.kernel;
    auto setting = [&](const char* key, const auto& fact) {
        if (fact.is_known()) n.settings[key] = fmt::format("{}", fact.value());
    };
    setting("vm.swappiness", k.swappiness);
    setting("kernel.numa_balancing", k.numa_balancing);
    setting("transparent_hugepage", k.thp_enabled);
    setting("transparent_hugepage_defrag", k.thp_defrag);  // kernel.thp judges both
    if (s.nofile.is_known()) n.settings["nofile"] = std::to_string(s.nofile.value().soft);
    if (s.environment.is_known()) {
        n.environment_read = true;
        for (const auto& [var, value] : s.environment.value().vars)
            if (var.starts_with("NCCL_")) n.settings[var] = value;
    }
}

void add_measurements(const json& bench, NodeInput& n) {
    if (!bench.is_object()) return;
    for (const auto& j : bench.value("results", json::array())) {
        auto r = bench::record_from_json(j);
        // A measurement cut short by a stop request is no figure to compare nodes by.
        if (!r.ok() || r->samples.empty() || r->partial) continue;
        Measurement m;
        json target = r->target;
        if (auto g = target.find("gpu"); g != target.end() && g->is_number_integer())
            m.device = fmt::format("GPU {}", g->get<int>());
        else if (auto d = target.find("device"); d != target.end() && d->is_string())
            m.device = d->get<std::string>();
        // The same measurement on every node and every GPU: not where it was taken.
        for (const char* where : {"gpu", "pci_bus_id", "numa_node", "device", "path", "model"})
            target.erase(where);
        m.key = r->bench + "/" + r->name + "/" + r->params.dump() + "/" + target.dump();
        m.label = r->bench + " " + r->name;
        for (const json* part : {&r->params, static_cast<const json*>(&target)})
            if (part->is_object())
                for (const auto& [k, v] : part->items())
                    m.params += (m.params.empty() ? "" : " ") + k + "=" + text_of(v);
        m.unit = r->unit;
        m.value = r->median();
        m.samples = r->samples.size();
        m.higher_is_better = bench::higher_is_better(*r);
        n.measurements.push_back(std::move(m));
    }
}

// A report's coverage; one without (schema 1) says nothing of what ran, and the node says so.
void add_coverage(const json& doc, NodeInput& n) {
    const auto c = doc.find("coverage");
    if (c == doc.end() || !c->is_object()) {
        n.warnings.push_back(
            "its report does not say which of its class's required checks ran (a report of "
            "schema 1, or of a run interrupted before the machine was read)");
        return;
    }
    n.coverage.known = true;
    if (const auto cls = c->find("class"); cls != c->end() && cls->is_object())
        n.coverage.label = cls->value("label", "");
    n.coverage.required = c->value("required", size_t{0});
    n.coverage.judged = c->value("judged", size_t{0});
    for (const auto& m : c->value("missing", json::array()))
        if (m.is_string()) n.coverage.missing.push_back(m.get<std::string>());
}

NodeInput unreadable(const std::string& path, std::string why) {
    NodeInput n;
    n.name = fs::path(path).filename() == "report.json"
                 ? fs::path(path).parent_path().filename().string()
                 : fs::path(path).stem().string();
    n.source = path;
    n.verdict = "UNKNOWN";
    n.problem = std::move(why);
    return n;
}

NodeInput from_report(const json& doc, const std::string& path) {
    if (!doc.contains("verdict") || !doc["verdict"].is_string() || !doc.contains("host"))
        return unreadable(path,
                          "a trainrig.validate document without a verdict or host: "
                          "truncated, or edited");
    NodeInput n;
    n.kind = "report";
    n.source = path;
    n.name = text_of(doc["host"]);
    n.verdict = doc["verdict"].get<std::string>();
    n.written_at = doc.value("finished_at", "");
    n.written = parse_utc_iso8601(n.written_at).value_or(0);
    n.incomplete = validate::report_incomplete(doc);
    if (n.incomplete)
        n.doubt =
            "its validate was interrupted: an incomplete report is no reason to act; "
            "run validate again";
    if (std::string changed = validate::report_changes(path); !changed.empty())
        n.doubt = changed + " (`trainrig report verify`)";
    for (const auto& i : doc.value("items", json::array()))
        if (i.is_object() && i.value("level", "") == "fail") n.failed.push_back(i.value("id", ""));
    add_coverage(doc, n);
    add_versions(doc.value("versions", json::object()), n);
    add_measurements(doc.value("bench", json::object()), n);
    // The snapshot validate keeps beside its report has the hardware and settings.
    const fs::path raw = fs::path(path).parent_path() / "raw" / "snapshot.json";
    if (auto text = read_user_file(raw.string(), "a report's raw/snapshot.json"); text.ok())
        if (auto s = snapshot_from_text(*text, raw.string()); s.ok()) add_machine(*s, n);
    return n;
}

NodeInput from_snapshot(const std::string& text, const std::string& path) {
    auto s = snapshot_from_text(text, path);
    if (!s.ok()) return unreadable(path, s.status().message());
    NodeInput n;
    n.kind = "snapshot";
    n.source = path;
    n.name =
        s->host.hostname.is_known() ? s->host.hostname.value() : fs::path(path).stem().string();
    n.written_at = s->collected_at;
    n.written = parse_utc_iso8601(n.written_at).value_or(0);
    // Its own verdict: doctor's rules, judged as validate judges a machine tree, coverage too.
    std::vector<validate::Item> items;
    const std::vector<Finding> findings = judge(*s, RuleOptions{}, Selection{});
    for (const auto& f : findings) {
        if (f.status == FindingStatus::kFail) n.failed.push_back(f.id);
        if (f.status == FindingStatus::kFail || f.status == FindingStatus::kWarn ||
            f.status == FindingStatus::kError)
            items.push_back(validate::finding_item(f));
    }
    validate::StageRecord doctor{
        "doctor", "configuration checks", 0, 0, validate::StageState::kRan, "", true};
    validate::RunRecord run;
    run.findings = &findings;
    const validate::Coverage coverage = validate::cover(
        validate::machine_class(*s, validate::Scope::kTree, validate::ValidateOptions{}), run);
    n.coverage = {true, coverage.machine.label(), coverage.required(), coverage.judged(), {}};
    for (const auto* m : coverage.missing()) n.coverage.missing.push_back(m->id);
    n.verdict = validate::verdict_name(
        validate::judge({doctor}, items, validate::Scope::kTree, false,
                        coverage.complete() ? "" : validate::missing_line(coverage))
            .verdict);
    add_versions(validate::machine_versions(*s), n);
    add_machine(*s, n);
    return n;
}

}  // namespace

NodeInput load_node(const std::string& path) {
    std::error_code ec;
    std::string file = path;
    if (fs::is_directory(path, ec)) file = (fs::path(path) / "report.json").string();
    auto text = read_user_file(file, "fleet judge");
    if (!text.ok()) return unreadable(file, text.status().message());
    const json doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return unreadable(file, "not a JSON document (truncated?)");
    const std::string schema = doc.value("schema", "");
    if (schema == "trainrig.validate") return from_report(doc, file);
    if (schema == kSnapshotSchema) return from_snapshot(*text, file);
    return unreadable(file, fmt::format("a {} document, not a trainrig.validate report or a "
                                        "trainrig.snapshot",
                                        schema.empty() ? "schema-less" : "'" + schema + "'"));
}

std::vector<NodeInput> load_nodes(const std::vector<std::string>& paths) {
    std::vector<std::string> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (!fs::is_directory(p, ec) || fs::exists(fs::path(p) / "report.json", ec)) {
            files.push_back(p);
            continue;
        }
        std::vector<std::string> inside;
        for (const auto& e : fs::directory_iterator(p, ec)) {
            if (e.is_directory() && fs::exists(e.path() / "report.json"))
                inside.push_back(e.path().string());
            // A fleet report written into the same folder (`fleet judge --out`) is no node.
            else if (e.is_regular_file() && e.path().extension() == ".json" &&
                     e.path().filename() != kFleetReportJson)
                inside.push_back(e.path().string());
        }
        std::sort(inside.begin(), inside.end());
        files.insert(files.end(), inside.begin(), inside.end());
    }
    std::vector<NodeInput> nodes;
    for (const auto& f : files) nodes.push_back(load_node(f));
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const NodeInput& a, const NodeInput& b) { return a.name < b.name; });
    return nodes;
}

std::vector<SetAside> keep_newest_per_host(std::vector<NodeInput>& nodes) {
    std::map<std::string, size_t> newest;  // host -> index of its state
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeInput& n = nodes[i];
        if (!n.problem.empty()) continue;
        auto [it, first] = newest.try_emplace(n.name, i);
        const NodeInput& held = nodes[it->second];
        // Of two equally new, the later path: deterministic, and said in the set-aside line.
        if (!first &&
            (validate::report_supersedes(n.incomplete, n.written, held.incomplete, held.written) ||
             (n.incomplete == held.incomplete && n.written == held.written)))
            it->second = i;
    }
    std::vector<SetAside> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeInput& n = nodes[i];
        const auto it = n.problem.empty() ? newest.find(n.name) : newest.end();
        if (it != newest.end() && it->second != i)
            out.push_back({n.name, n.source, n.written_at, nodes[it->second].source, n.written,
                           n.verdict, n.failed});
    }
    std::vector<NodeInput> kept;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto it = nodes[i].problem.empty() ? newest.find(nodes[i].name) : newest.end();
        if (it == newest.end() || it->second == i) kept.push_back(std::move(nodes[i]));
    }
    nodes = std::move(kept);
    return out;
}

}  // namespace trainrig::fleet

// `--catalog FILE`: GPUs and links added to, or overriding fields of, the built-in catalog.
// The format is in docs/plan.md; every key is checked, so a typo is an error, not a silently
// ignored line.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/toml_text.h"
#include "core/units.h"
#include "plan/hardware.h"

namespace trainrig::plan {

namespace {

class TableReader {
public:
    TableReader(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}

    // `zero_ok`: 0 is a meaning (no such tensor-core path, no known price), not a typo.
    void number(const char* key, double scale, double& out, bool zero_ok = false) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) return;
        auto v = n->value<double>();
        if (!v || !std::isfinite(*v) || *v < 0 || (*v == 0 && !zero_ok))
            return fail(key, zero_ok ? "a number, zero or more" : "a number above zero");
        out = *v * scale;
    }
    void integer(const char* key, int& out) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) return;
        auto v = n->value<int64_t>();
        if (!v || *v <= 0 || *v > 1'000'000) return fail(key, "a positive integer");
        out = static_cast<int>(*v);
    }
    void text(const char* key, std::string& out) {
        seen_.push_back(key);
        const toml::node* n = t_.get(key);
        if (!n) return;
        auto v = n->value<std::string>();
        if (!v) return fail(key, "a string");
        out = *v;
    }
    bool has(const char* key) const { return t_.get(key) != nullptr; }
    // The first key of the table that no reader asked for.
    void reject_unknown() {
        for (const auto& [key, node] : t_) {
            if (std::find(seen_.begin(), seen_.end(), key.str()) == seen_.end()) {
                const auto line = node.source().begin.line;
                status_ = {Errc::kInvalidInput,
                           fmt::format("{} line {}: unknown key \"{}\"", where_, line, key.str())};
                return;
            }
        }
    }
    void fail(const char* key, const char* expected) {
        if (!status_.ok()) return;
        const auto line = t_.get(key)->source().begin.line;
        status_ = {Errc::kInvalidInput,
                   fmt::format("{} line {}: \"{}\" must be {}", where_, line, key, expected)};
    }
    Status& status() { return status_; }

private:
    const toml::table& t_;
    std::string where_;
    std::vector<std::string> seen_;
    Status status_;
};

Status read_gpu(HardwareCatalog& c, const std::string& id, const toml::table& t,
                std::string_view file) {
    const std::string where = fmt::format("{} [gpu.{}]", file, id);
    GpuSpec* existing = c.gpu(id);
    GpuSpec g = existing ? *existing : GpuSpec{};
    g.id = id;
    TableReader r(t, where);
    r.text("name", g.name);
    r.text("source", g.source);
    r.number("fp32_tflops", 1, g.tflops_fp32, true);
    r.number("tf32_tflops", 1, g.tflops_tf32, true);
    r.number("bf16_tflops", 1, g.tflops_bf16);
    if (r.has("bf16_tflops") && !r.has("fp16_tflops")) g.tflops_fp16 = g.tflops_bf16;
    r.number("fp16_tflops", 1, g.tflops_fp16, true);
    r.number("fp8_tflops", 1, g.tflops_fp8, true);
    r.number("memory_mib", kMiB, g.memory_bytes);
    r.number("hbm_tbps", 1e12, g.hbm_bytes_per_s);
    r.number("tdp_watts", 1, g.tdp_watts);
    r.text("intra_link", g.intra_link);
    r.text("inter_link", g.inter_link);
    r.integer("gpus_per_node", g.gpus_per_node);
    r.integer("nics_per_node", g.nics_per_node);
    r.number("usd_per_gpu_hour", 1, g.usd_per_gpu_hour, true);
    r.text("price_source", g.price_source);
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (existing && r.has("usd_per_gpu_hour") && !r.has("price_source"))
        g.price_source = std::string(file);
    if (!existing) {
        for (const char* key : {"name", "bf16_tflops", "memory_mib", "hbm_tbps", "tdp_watts",
                                "intra_link", "inter_link"})
            if (!r.has(key))
                return {Errc::kInvalidInput, fmt::format("{}: a new GPU needs \"{}\"", where, key)};
        if (g.source.empty()) g.source = std::string(file);
    }
    if (existing)
        *existing = g;
    else
        c.gpus.push_back(g);
    return ok_status();
}

Status read_link(HardwareCatalog& c, const std::string& id, const toml::table& t,
                 std::string_view file) {
    const std::string where = fmt::format("{} [link.{}]", file, id);
    LinkSpec* existing = c.link(id);
    LinkSpec l = existing ? *existing : LinkSpec{};
    l.id = id;
    TableReader r(t, where);
    r.text("name", l.name);
    r.text("source", l.source);
    std::string kind = l.kind == LinkKind::kInterNode ? "inter" : "intra";
    r.text("kind", kind);
    r.number("gbytes_per_s", 1e9, l.bytes_per_s);
    r.number("efficiency", 1, l.efficiency);
    r.reject_unknown();
    TRAINRIG_TRY(r.status());
    if (kind != "intra" && kind != "inter")
        return {
            Errc::kInvalidInput,
            fmt::format("{}: \"kind\" must be \"intra\" or \"inter\", not \"{}\"", where, kind)};
    l.kind = kind == "inter" ? LinkKind::kInterNode : LinkKind::kIntraNode;
    if (l.efficiency > 1)
        return {Errc::kInvalidInput,
                fmt::format("{}: \"efficiency\" is a fraction of the link rate, at most 1", where)};
    if (!existing) {
        for (const char* key : {"name", "kind", "gbytes_per_s", "efficiency"})
            if (!r.has(key))
                return {Errc::kInvalidInput,
                        fmt::format("{}: a new link needs \"{}\"", where, key)};
        if (l.source.empty()) l.source = std::string(file);
    }
    if (existing)
        *existing = l;
    else
        c.links.push_back(l);
    return ok_status();
}

}  // namespace

Status merge_hardware_toml(HardwareCatalog& catalog, std::string_view text,
                           std::string_view where) {
    auto parsed = parse_toml(text, where);
    if (!parsed) return parsed.status();
    const toml::table doc = std::move(parsed).value();
    HardwareCatalog merged = catalog;
    for (const auto& [key, node] : doc) {
        const auto* section = node.as_table();
        if ((key.str() != "gpu" && key.str() != "link") || !section)
            return {Errc::kInvalidInput,
                    fmt::format("{} line {}: unknown section \"{}\" (expected [gpu.ID] or "
                                "[link.ID])",
                                where, node.source().begin.line, key.str())};
        for (const auto& [id, entry] : *section) {
            const auto* table = entry.as_table();
            if (!table)
                return {Errc::kInvalidInput,
                        fmt::format("{} line {}: \"{}.{}\" must be a table", where,
                                    entry.source().begin.line, key.str(), id.str())};
            const std::string name(id.str());
            TRAINRIG_TRY(key.str() == "gpu" ? read_gpu(merged, name, *table, where)
                                            : read_link(merged, name, *table, where));
        }
    }
    for (const auto& g : merged.gpus) {
        for (const auto* link_id : {&g.intra_link, &g.inter_link}) {
            const LinkSpec* l = merged.link(*link_id);
            const LinkKind want =
                link_id == &g.intra_link ? LinkKind::kIntraNode : LinkKind::kInterNode;
            if (!l || l->kind != want)
                return {Errc::kInvalidInput,
                        fmt::format("{}: GPU {} names {} link \"{}\", which the catalog does "
                                    "not have (known: {})",
                                    where, g.id, want == LinkKind::kIntraNode ? "intra" : "inter",
                                    *link_id, merged.link_ids())};
        }
    }
    catalog = std::move(merged);
    return ok_status();
}

}  // namespace trainrig::plan

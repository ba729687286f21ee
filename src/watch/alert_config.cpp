#include "watch/alert_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/text.h"
#include "core/toml_text.h"
#include "core/user_file.h"

namespace trainrig::watch {
namespace {

// Reads one [[rule]] or [[action]] table, naming the file and line of anything wrong.
class Reader {
public:
    Reader(const toml::table& t, std::string_view where) : t_(t), where_(where) {}

    const toml::node* get(const char* key) {
        seen_.emplace_back(key);
        return t_.get(key);
    }
    Status fail(const char* key, std::string_view expected) const {
        const toml::node* n = t_.get(key);
        const auto line = n ? n->source().begin.line : t_.source().begin.line;
        return {Errc::kInvalidInput,
                fmt::format("{} line {}: \"{}\" must be {}", where_, line, key, expected)};
    }
    Status missing(const char* key) const {
        return {Errc::kInvalidInput, fmt::format("{} line {}: this table needs \"{}\"", where_,
                                                 t_.source().begin.line, key)};
    }
    Status text(const char* key, std::string& out) {
        const toml::node* n = get(key);
        if (!n) return {};
        auto v = n->value<std::string>();
        if (!v) return fail(key, "a string");
        out = *v;
        return {};
    }
    Status number(const char* key, std::optional<double>& out) {
        const toml::node* n = get(key);
        if (!n) return {};
        auto v = n->value<double>();
        if (!v || !std::isfinite(*v)) return fail(key, "a number");
        out = *v;
        return {};
    }
    // A duration: a number of seconds, or a string with a unit ("30s", "10m", "2h", "1d").
    Status duration(const char* key, double& out) {
        const toml::node* n = get(key);
        if (!n) return {};
        if (auto v = n->value<double>(); v && std::isfinite(*v) && *v >= 0) {
            out = *v;
            return {};
        }
        if (auto s = n->value<std::string>();
            s && !s->empty() && !std::isdigit(static_cast<unsigned char>(s->back()))) {
            if (auto v = parse_period(*s)) {
                out = *v;
                return {};
            }
        }
        return fail(key, "a duration: seconds, or a string such as \"30s\", \"10m\", \"2h\"");
    }
    Status reject_unknown() const {
        for (const auto& [key, node] : t_)
            if (std::find(seen_.begin(), seen_.end(), key.str()) == seen_.end())
                return {Errc::kInvalidInput, fmt::format("{} line {}: unknown key \"{}\"", where_,
                                                         node.source().begin.line, key.str())};
        return {};
    }
    int line() const { return static_cast<int>(t_.source().begin.line); }

private:
    const toml::table& t_;
    std::string_view where_;
    std::vector<std::string> seen_;
};

Result<RuleKind> kind_from(const std::string& s) {
    if (s == "threshold") return RuleKind::kThreshold;
    if (s == "rate") return RuleKind::kRate;
    if (s == "event") return RuleKind::kEvent;
    if (s == "skew") return RuleKind::kSkew;
    if (s == "stability") return RuleKind::kStability;
    return Status{Errc::kInvalidInput, "threshold, rate, event, skew or stability"};
}

// Reads a [[rule]] over `base` (a default of the same name, or a blank rule).
Status read_rule(const toml::table& t, std::string_view where, const std::vector<Rule>& defaults,
                 Rule& out, bool& enabled) {
    Reader r(t, where);
    std::string name;
    TRAINRIG_TRY(r.text("name", name));
    if (name.empty()) return r.missing("name");
    const auto def = std::find_if(defaults.begin(), defaults.end(),
                                  [&](const Rule& d) { return d.name == name; });
    out = def != defaults.end() ? *def : Rule{};
    out.name = name;
    enabled = true;
    if (const toml::node* n = r.get("enabled")) {
        auto v = n->value<bool>();
        if (!v) return r.fail("enabled", "true or false");
        enabled = *v;
    }
    std::string kind;
    TRAINRIG_TRY(r.text("kind", kind));
    if (!kind.empty()) {
        auto k = kind_from(kind);
        if (!k) return r.fail("kind", k.status().message());
        out.kind = *k;
    } else if (def == defaults.end() && enabled) {
        return r.missing("kind");
    }
    std::string s;
    TRAINRIG_TRY(r.text("severity", s));
    if (!s.empty()) {
        if (s == "info")
            out.severity = Severity::kInfo;
        else if (s == "warning")
            out.severity = Severity::kWarning;
        else if (s == "critical")
            out.severity = Severity::kCritical;
        else
            return r.fail("severity", "info, warning or critical");
    }
    s.clear();
    TRAINRIG_TRY(r.text("field", s));
    if (!s.empty()) {
        auto f = field_from_name(s);
        if (!f) return r.fail("field", "one of " + field_names());
        out.field = *f;
    }
    std::optional<double> above, below, deviation, stddev, busy;
    bool per_link = false;  // above = "link": each GPU's own PCIe link's limit
    if (const toml::node* n = r.get("above"); n && n->value<std::string>()) {
        if (*n->value<std::string>() != "link") return r.fail("above", "a number or \"link\"");
        per_link = true;
    } else {
        TRAINRIG_TRY(r.number("above", above));
    }
    TRAINRIG_TRY(r.number("below", below));
    TRAINRIG_TRY(r.number("deviation", deviation));
    TRAINRIG_TRY(r.number("stddev_above", stddev));
    TRAINRIG_TRY(r.number("busy_above", busy));
    if (above && below) return r.fail("below", "left out when \"above\" is given");
    if (above || below || per_link) out.limit_per_link = per_link;
    if (above) out.limit = *above, out.below = false;
    if (below) out.limit = *below, out.below = true;
    if (deviation) out.limit = *deviation;
    if (stddev) out.limit = *stddev;
    if (busy) out.busy_above = *busy;
    TRAINRIG_TRY(r.duration("for", out.for_seconds));
    std::optional<double> samples;
    TRAINRIG_TRY(r.number("samples", samples));
    if (samples) {
        if (*samples < 1 || *samples > 1000 || *samples != std::floor(*samples))
            return r.fail("samples", "a whole number from 1 to 1000");
        out.samples = static_cast<int>(*samples);
    }
    TRAINRIG_TRY(r.duration("window", out.window_seconds));
    TRAINRIG_TRY(r.duration("hold", out.hold_seconds));
    s.clear();
    TRAINRIG_TRY(r.text("event", s));
    if (!s.empty()) {
        auto e = event_from_name(s);
        if (!e)
            return r.fail("event",
                          "xid, fallen_off_bus, aer_uncorrected, aer_fatal, aer_nonfatal, "
                          "aer_corrected, gpu_lost or "
                          "gpu_hung");
        out.event = *e;
    }
    if (const toml::node* n = r.get("xid")) {
        if (auto one = n->value<int64_t>()) {
            out.xids = std::to_string(*one);
        } else if (auto word = n->value<std::string>();
                   word && (*word == "any" || *word == "fatal" || *word == "nonfatal")) {
            out.xids = *word;
        } else if (const auto* list = n->as_array()) {
            std::string joined;
            for (const auto& item : *list) {
                auto code = item.value<int64_t>();
                if (!code)
                    return r.fail("xid", "\"any\", \"fatal\", \"nonfatal\" or a list of codes");
                joined += (joined.empty() ? "" : ",") + std::to_string(*code);
            }
            out.xids = joined;
        } else {
            return r.fail("xid", "\"any\", \"fatal\", \"nonfatal\" or a list of codes");
        }
    }
    TRAINRIG_TRY(r.text("remedy", out.remedy));
    TRAINRIG_TRY(r.reject_unknown());
    if (!enabled) return {};
    const bool needs_limit = out.kind != RuleKind::kEvent;
    if (needs_limit && def == defaults.end() && !above && !below && !deviation && !stddev &&
        !per_link)
        return {Errc::kInvalidInput,
                fmt::format("{} line {}: rule \"{}\" needs a limit (\"above\", \"below\", "
                            "\"deviation\" or \"stddev_above\")",
                            where, r.line(), name)};
    if ((out.kind == RuleKind::kRate) != field_info(out.field).counter &&
        out.kind == RuleKind::kRate)
        return r.fail("field",
                      "a counter for a rate rule (pcie_replays, ecc_corrected, "
                      "ecc_uncorrected, energy_joules)");
    if (out.limit_per_link && (out.kind != RuleKind::kRate || out.field != Field::kPcieReplays))
        return r.fail("above", "a number: \"link\" is the limit of a rate of pcie_replays");
    if ((out.kind == RuleKind::kRate || out.kind == RuleKind::kStability) &&
        out.window_seconds <= 0)
        return r.fail("window", "longer than zero");
    return {};
}

Status read_action(const toml::table& t, std::string_view where, ActionSpec& out) {
    Reader r(t, where);
    std::string kind;
    TRAINRIG_TRY(r.text("kind", kind));
    if (kind == "log") {
        out.kind = ActionSpec::Kind::kLog;
        TRAINRIG_TRY(r.text("path", out.path));
        if (out.path.empty()) out.path = "-";
    } else if (kind == "command") {
        out.kind = ActionSpec::Kind::kCommand;
        const toml::node* n = r.get("argv");
        const auto* list = n ? n->as_array() : nullptr;
        if (!list || list->empty()) return r.fail("argv", "a list of strings, the program first");
        for (const auto& item : *list) {
            auto word = item.value<std::string>();
            if (!word) return r.fail("argv", "a list of strings, the program first");
            out.argv.push_back(*word);
        }
        TRAINRIG_TRY(r.duration("timeout", out.timeout_seconds));
    } else if (kind == "webhook") {
        out.kind = ActionSpec::Kind::kWebhook;
        TRAINRIG_TRY(r.text("url", out.url));
        if (!out.url.starts_with("http://"))
            return r.fail("url", "an http:// URL (use a local relay for https)");
        TRAINRIG_TRY(r.duration("timeout", out.timeout_seconds));
    } else {
        return r.fail("kind", "log, command or webhook");
    }
    if (out.timeout_seconds <= 0 || out.timeout_seconds > 600)
        return r.fail("timeout", "between 0 and 600 seconds");
    return r.reject_unknown();
}

}  // namespace

AlertConfig default_alert_config() {
    AlertConfig c;
    c.rules = default_rules();
    ActionSpec log;
    log.path = "-";
    c.actions.push_back(log);
    return c;
}

Result<AlertConfig> parse_alert_config(std::string_view text, std::string_view where) {
    auto parsed = parse_toml(text, where);
    if (!parsed) return parsed.status();
    const toml::table doc = std::move(parsed).value();
    const std::vector<Rule> defaults = default_rules();
    bool use_defaults = true;
    AlertConfig c;
    for (const auto& [key, node] : doc) {
        const auto line = node.source().begin.line;
        if (key.str() == "defaults") {
            auto v = node.value<bool>();
            if (!v)
                return Status{
                    Errc::kInvalidInput,
                    fmt::format("{} line {}: \"defaults\" must be true or false", where, line)};
            use_defaults = *v;
        } else if (key.str() != "rule" && key.str() != "action") {
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {}: unknown key \"{}\" (expected defaults, "
                                      "[[rule]] or [[action]])",
                                      where, line, key.str())};
        } else if (!node.is_array_of_tables()) {
            return Status{Errc::kInvalidInput,
                          fmt::format("{} line {}: write \"{}\" as [[{}]] tables", where, line,
                                      key.str(), key.str())};
        }
    }
    if (use_defaults) c.rules = defaults;
    std::vector<std::string> names;
    if (const auto* rules = doc["rule"].as_array()) {
        for (const auto& node : *rules) {
            Rule rule;
            bool enabled = true;
            TRAINRIG_TRY(read_rule(*node.as_table(), where, defaults, rule, enabled));
            if (std::find(names.begin(), names.end(), rule.name) != names.end())
                return Status{Errc::kInvalidInput,
                              fmt::format("{} line {}: a second rule named \"{}\"", where,
                                          node.source().begin.line, rule.name)};
            names.push_back(rule.name);
            auto it = std::find_if(c.rules.begin(), c.rules.end(),
                                   [&](const Rule& r) { return r.name == rule.name; });
            if (!enabled) {
                if (it != c.rules.end()) c.rules.erase(it);
            } else if (it != c.rules.end()) {
                *it = rule;
            } else {
                c.rules.push_back(rule);
            }
        }
    }
    if (const auto* actions = doc["action"].as_array()) {
        for (const auto& node : *actions) {
            ActionSpec a;
            TRAINRIG_TRY(read_action(*node.as_table(), where, a));
            c.actions.push_back(std::move(a));
        }
    }
    if (c.actions.empty()) c.actions = default_alert_config().actions;
    return c;
}

Result<AlertConfig> load_alert_config(const std::string& path) {
    auto text = read_user_file(path, "--rules", 4u << 20);
    if (!text) return text.status();
    return parse_alert_config(*text, path);
}

}  // namespace trainrig::watch

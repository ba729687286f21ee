#include "watch/replay.h"

#include <fmt/format.h>

#include "watch/sample_json.h"

namespace trainrig::watch {

Result<ReplayResult> replay_timeline(std::istream& in, const std::string& source,
                                     std::vector<Rule> rules) {
    // Read everything first: a malformed document anywhere judges nothing.
    std::vector<ReplayTick> ticks;
    for (size_t n = 1;; ++n) {
        in >> std::ws;
        if (in.peek() == std::char_traits<char>::eof()) break;
        nlohmann::json doc;
        try {
            in >> doc;
        } catch (const nlohmann::json::exception& e) {
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: document {} is not JSON ({})", source, n, e.what())};
        }
        auto tick = tick_from_json(doc);
        if (!tick)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: document {}: {}", source, n, tick.status().message())};
        if (!ticks.empty() && tick->sample.time < ticks.back().sample.time)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: document {}: time {} is before the tick above it ({}); "
                                      "a time line goes forward",
                                      source, n, tick->sample.time, ticks.back().sample.time)};
        ticks.push_back(std::move(tick).value());
    }
    if (ticks.empty())
        return Status{Errc::kInvalidInput,
                      fmt::format("{}: no trainrig.watch.sample document in it", source)};
    ReplayResult r;
    r.source = source;
    r.ticks = ticks.size();
    r.first = ticks.front().sample.time;
    r.last = ticks.back().sample.time;
    r.rules = rules;
    AlertEngine engine(std::move(rules));
    for (const auto& t : ticks)
        for (auto& a : engine.evaluate(t.sample, t.gpus, t.events))
            r.alerts.push_back(std::move(a));
    r.firing = engine.firing();
    return r;
}

nlohmann::json replay_json(const ReplayResult& r) {
    nlohmann::json doc = {{"schema", "trainrig.watch.replay"},
                          {"schema_version", 1},
                          {"source", r.source},
                          {"ticks", r.ticks},
                          {"first_tick", r.first},
                          {"last_tick", r.last}};
    doc["alerts"] = nlohmann::json::array();
    for (const auto& a : r.alerts) {
        auto j = nlohmann::json::parse(alert_json(a));
        j["offset_seconds"] = a.at - r.first;
        doc["alerts"].push_back(std::move(j));
    }
    doc["rules"] = nlohmann::json::array();
    for (const auto& rule : r.rules) {
        nlohmann::json j = {{"name", rule.name}, {"severity", severity_name(rule.severity)}};
        if (!rule.doctor_rule.empty()) j["check"] = rule.doctor_rule;
        doc["rules"].push_back(std::move(j));
    }
    doc["firing"] = nlohmann::json::array();
    for (const auto& a : r.firing) doc["firing"].push_back(nlohmann::json::parse(alert_json(a)));
    return doc;
}

std::string render_replay_text(const ReplayResult& r) {
    std::string out =
        fmt::format("{}: {} ticks over {:.1f} s\n", r.source, r.ticks, r.last - r.first);
    if (r.alerts.empty()) out += "no alert fired\n";
    for (const auto& a : r.alerts)
        out += fmt::format("{:>+9.1f} s  {:<8} {} [{}]: {}\n", a.at - r.first,
                           a.firing ? "FIRING" : "resolved", a.rule, severity_name(a.severity),
                           a.summary);
    if (!r.firing.empty()) {
        out += fmt::format("still firing at the last tick: {}\n", r.firing.size());
        for (const auto& a : r.firing)
            out += fmt::format("  {} [{}]\n", a.rule, severity_name(a.severity));
    }
    return out;
}

}  // namespace trainrig::watch

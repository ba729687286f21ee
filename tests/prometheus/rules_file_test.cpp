// packaging/prometheus/trainrig-rules.yml against watch's own rules: each default rule has its
// alert, the catch-all for a node's own rules leaves out exactly the defaults, and the ids the
// file gives its own alerts are not watch's. The ids come from default_rules(), their one source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "watch/alert_rule.h"

namespace trainrig::watch {
namespace {

// One `- alert:` entry of the rules file: its name and its text up to the next entry.
struct AlertEntry {
    std::string name;
    std::string text;
};

std::vector<AlertEntry> read_alerts(const std::string& path) {
    std::ifstream in(path);
    std::vector<AlertEntry> out;
    static const std::regex entry(R"(^\s*- (alert|record): (\S+)\s*$)");
    std::string line;
    bool in_alert = false;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, entry)) {
            in_alert = m[1] == "alert";
            if (in_alert) out.push_back({m[2], ""});
        } else if (in_alert) {
            out.back().text += line + "\n";
        }
    }
    return out;
}

// Every capture of `re` in `text`.
std::vector<std::string> all(const std::string& text, const std::regex& re) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        out.push_back((*it)[1]);
    return out;
}

// "gpu-hw-slowdown" -> "TrainrigGpuHwSlowdown": the file's naming of watch's rules.
std::string alert_name(const std::string& rule) {
    std::string out = "Trainrig";
    bool upper = true;
    for (char c : rule) {
        if (c == '-') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

class PrometheusRules : public ::testing::Test {
protected:
    void SetUp() override {
        alerts_ = read_alerts(std::string(TRAINRIG_SOURCE_DIR) +
                              "/packaging/prometheus/trainrig-rules.yml");
        ASSERT_FALSE(alerts_.empty()) << "no alerts read from the rules file";
        for (const auto& r : default_rules()) defaults_.insert(r.name);
    }
    std::vector<AlertEntry> alerts_;
    std::set<std::string> defaults_;
};

TEST_F(PrometheusRules, EveryDefaultRuleHasItsAlert) {
    static const std::regex selects(R"re([{,]\s*rule="([^"]+)")re");
    std::map<std::string, std::string> alert_of;  // rule id -> alert that selects it
    for (const auto& a : alerts_)
        for (const auto& id : all(a.text, selects)) {
            EXPECT_TRUE(defaults_.count(id))
                << a.name << " selects rule \"" << id << "\", which is not one of watch's defaults";
            EXPECT_TRUE(alert_of.emplace(id, a.name).second)
                << "rule \"" << id << "\" is selected by " << alert_of[id] << " and " << a.name;
        }
    for (const auto& id : defaults_) {
        ASSERT_TRUE(alert_of.count(id)) << "watch's rule \"" << id << "\" has no alert";
        EXPECT_EQ(alert_of[id], alert_name(id));
    }
}

TEST_F(PrometheusRules, CatchAllLeavesOutExactlyTheDefaults) {
    static const std::regex excludes(R"re(rule!="([^"]+)")re");
    const auto it = std::find_if(alerts_.begin(), alerts_.end(), [](const AlertEntry& a) {
        return a.name == "TrainrigWatchAlert";
    });
    ASSERT_NE(it, alerts_.end());
    const auto ids = all(it->text, excludes);
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), defaults_);
    EXPECT_EQ(ids.size(), defaults_.size()) << "an id is left out twice";
}

TEST_F(PrometheusRules, OwnAlertsHaveIdsOfTheirOwnAndASeverity) {
    static const std::regex own_id(R"(\n\s+rule: (\S+)\n)");
    static const std::regex severity(R"(\n\s+severity: (info|warning|critical)\n)");
    std::set<std::string> seen;
    for (const auto& a : alerts_) {
        const auto ids = all(a.text, own_id);
        if (ids.empty()) {  // watch's alerts: rule and severity come from its series
            EXPECT_TRUE(a.text.find(":trainrig_alerts_firing:") != std::string::npos)
                << a.name << " has no rule label of its own and re-raises none of watch's";
            continue;
        }
        ASSERT_EQ(ids.size(), 1u) << a.name;
        EXPECT_FALSE(defaults_.count(ids[0])) << a.name << " reuses watch's id " << ids[0];
        EXPECT_TRUE(seen.insert(ids[0]).second) << a.name << " repeats the id " << ids[0];
        EXPECT_EQ(all(a.text, severity).size(), 1u) << a.name << " needs one severity label";
    }
    EXPECT_GE(seen.size(), 3u) << "the node-down, watch-health and fleet alerts";
}

}  // namespace
}  // namespace trainrig::watch

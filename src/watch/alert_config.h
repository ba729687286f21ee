// The alert rules file (TOML; docs/watch.md "Alert rules"): rules that add to, change or switch
// off the defaults by name, and the actions that receive every alert.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "watch/alert_rule.h"

namespace trainrig::watch {

struct ActionSpec {
    enum class Kind { kLog, kCommand, kWebhook };
    Kind kind = Kind::kLog;
    std::string path;               // log: a file of JSON lines; "-" = stderr
    std::vector<std::string> argv;  // command: run without a shell, the alert JSON on stdin
    std::string url;                // webhook: http://host:port/path, POSTed the alert JSON
    double timeout_seconds = 10;    // command, webhook
    bool operator==(const ActionSpec&) const = default;
};

struct AlertConfig {
    std::vector<Rule> rules;
    std::vector<ActionSpec> actions;
};

// The defaults alone, with one action: JSON lines on stderr.
AlertConfig default_alert_config();

// Parses a rules file's text; `where` names it in errors ("rules.toml line 7: ...").
Result<AlertConfig> parse_alert_config(std::string_view text, std::string_view where);
Result<AlertConfig> load_alert_config(const std::string& path);

}  // namespace trainrig::watch

// `trainrig watch replay`: judges a time line of ticks with the alert rules, as the daemon would
// have judged them live, on the ticks' own clock. The time line is a sequence of
// trainrig.watch.sample documents (what `watch --once --json` writes; one after another or one
// per line). Use it to try a rules file on a recorded incident before deploying it, or to
// measure how long a rule takes to fire (docs/watch.md, "Replaying a time line").
#pragma once

#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "watch/alert_engine.h"

namespace trainrig::watch {

struct ReplayResult {
    std::string source;  // the file's name, for messages
    size_t ticks = 0;
    double first = 0, last = 0;  // the first and last tick's time
    std::vector<Alert> alerts;   // every firing and resolution, in order
    std::vector<Alert> firing;   // still firing after the last tick
    std::vector<Rule> rules;     // what it was judged with
};

// kInvalidInput naming the document (1-based) and the member when the time line is malformed
// or goes back in time; nothing is judged then.
Result<ReplayResult> replay_timeline(std::istream& in, const std::string& source,
                                     std::vector<Rule> rules);

nlohmann::json replay_json(const ReplayResult& r);
std::string render_replay_text(const ReplayResult& r);

}  // namespace trainrig::watch

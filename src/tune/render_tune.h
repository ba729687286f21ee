// How a profile is shown: `tune show` (every setting, its value now, reason and source),
// `tune diff` (the managed files as a unified diff, then the live values that would change),
// and JSON (schema "trainrig.tune", docs/formats.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tune/profile.h"

namespace trainrig::tune {

// `verbose`: show names the doctor rule that judges each setting; diff gives each live change's
// reason.
std::string render_show(const Profile& p, bool verbose = false);
std::string render_diff(const Profile& p, bool verbose = false);
nlohmann::json profile_to_json(const Profile& p);
// Lines of `old` and `proposed` as a minimal unified diff body ("-", "+", " " prefixed lines).
std::string line_diff(const std::string& old, const std::string& proposed);
// Settings that differ from the machine, and files whose content would change.
size_t change_count(const Profile& p);

}  // namespace trainrig::tune

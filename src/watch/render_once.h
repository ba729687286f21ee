// `watch --once`: one tick as a table for people or as "trainrig.watch.sample" JSON for scripts
// (docs/formats.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "watch/watch_view.h"

namespace trainrig::watch {

nlohmann::json view_to_json(const WatchView& view, const std::vector<KernelEvent>& events);
std::string render_once_table(const WatchView& view, const std::vector<KernelEvent>& events);

}  // namespace trainrig::watch

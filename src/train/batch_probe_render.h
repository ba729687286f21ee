// The micro-batch probe's result (batch_probe.h) for people (a table of every size tried and
// the answer) and for programs (trainrig.train.find_batch, docs/formats.md). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "train/batch_probe.h"

namespace trainrig::train {

// The document without the command envelope (json_result adds it).
nlohmann::json probe_json(const ProbeReport& r);
std::string probe_text(const ProbeReport& r);
// One line for a size as soon as it is judged ("batch 16: fits, 2.41 GiB peak ...").
std::string probe_progress_line(const SizeTried& s);

}  // namespace trainrig::train

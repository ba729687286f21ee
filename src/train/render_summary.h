// The end-of-run summary of `trainrig train`: a table on the terminal, or the JSON document
// trainrig.train.summary (docs/formats.md).
#pragma once

#include <string>

#include "train/trainer.h"

namespace trainrig::train {

std::string summary_json(const TrainOptions& o, const TrainSummary& s, const std::string& comm);
std::string summary_text(const TrainOptions& o, const TrainSummary& s, const std::string& comm);

}  // namespace trainrig::train

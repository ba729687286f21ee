// A --gpus selection against the GPUs a machine shows: every index must name one (launch,
// bench run and validate say it in the same words). An empty selection is "all".
#pragma once

#include <cstddef>
#include <vector>

#include "core/status.h"

namespace trainrig {

Status check_gpu_selection(const std::vector<int>& selected, size_t visible);

}  // namespace trainrig

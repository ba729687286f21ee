// Reading one member of a fixture's "gpus" array.
#pragma once

#include <string>

#include "fake_nvml_json_reader.h"
#include "fake_nvml_model.h"

namespace fake_nvml {

Gpu read_gpu(const Json& value, const std::string& path, unsigned index);

}  // namespace fake_nvml

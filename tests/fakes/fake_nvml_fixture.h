// Reading a fixture file (the JSON schema in README.md) into a Model.
#pragma once

#include <string>

#include "fake_nvml_json_reader.h"
#include "fake_nvml_model.h"

namespace fake_nvml {

// Throws FixtureError, with a one-line reason, for a file that cannot be read, is not JSON or
// does not follow the schema.
Model load_fixture(const std::string& path);

Model parse_fixture(const Json& document);

}  // namespace fake_nvml

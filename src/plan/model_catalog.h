// The built-in models: the architectures users plan for most, with the exact parameter count
// their authors publish (the tests hold count_params() to it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/model_spec.h"

namespace trainrig::plan {

const std::vector<ModelSpec>& model_catalog();
std::optional<ModelSpec> find_model(std::string_view id);
// "gpt2, gpt2-medium, ...": for the error that names an unknown id.
std::string model_ids();

}  // namespace trainrig::plan

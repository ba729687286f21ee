// Reads a Hugging Face `config.json` (the file that ships with every checkpoint) into a
// ModelSpec. What the file implies without spelling it out comes from its model_type: GPT-2
// has biases everywhere and ties its embeddings; Qwen2 puts a bias on q/k/v but not on o_proj.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "plan/model_spec.h"

namespace trainrig::plan {

// `where` names the file in errors. Supported model_type: gpt2, llama, mistral, qwen2.
Result<ModelSpec> model_from_hf_config(std::string_view text, std::string_view where);

}  // namespace trainrig::plan

// One model definition for plan and train. plan describes a model (plan::ModelSpec, from its
// catalog or a Hugging Face config.json); train builds one (ModelConfig). These functions turn
// one into the other, so `plan --model X` and `train --model X` (or --model-config FILE) count
// the same parameters and `train --find-batch` starts from plan's memory estimate of the very
// shape it trains.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "plan/model_spec.h"
#include "train/model_config.h"

namespace trainrig::train {

// The planner's view of a shape train builds (the unpadded vocabulary: plan counts real tokens).
plan::ModelSpec model_spec_of(const ModelConfig& c);

// The shape train builds for a planned model, or one sentence saying what train cannot build
// (a head size other than hidden/heads, biases a Llama block does not have, a GELU MLP with
// rotary positions). The vocabulary is padded; max_seq is the model's context.
Result<ModelConfig> config_from_spec(const plan::ModelSpec& m);

// --model NAME: train's own presets (tiny, gpt2…, llama-tiny), then plan's catalog
// (llama2-7b, llama3-8b, mistral-7b, qwen2.5-7b…). Unknown: one sentence listing both.
Result<ModelConfig> find_train_model(std::string_view name);

// --model-config FILE: a Hugging Face config.json, read by plan's reader.
Result<ModelConfig> config_from_hf_file(const std::string& path);

}  // namespace trainrig::train

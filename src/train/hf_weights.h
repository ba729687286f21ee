// Reads a Hugging Face checkpoint of a Llama-family model (Llama, Mistral, Qwen2: the weights
// transformers saves as model.safetensors, or shards listed in model.safetensors.index.json)
// into trainrig's parameter layout, to fine-tune it (`train --init-from`). The tensor names are
// transformers' (LlamaForCausalLM): q/k/v_proj rows become the fused qkv rows in that order,
// gate_proj and up_proj the fused MLP rows. transformers stores q and k in the rotate-half
// order trainrig's RoPE uses (train/cpu/ops.h), so no permutation is needed. Every tensor the
// model needs must be present with its exact shape, and every tensor present must be used (a
// leftover name means the file is of another architecture); only the rotary inverse-frequency
// buffers older checkpoints carry are skipped, because trainrig computes them.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "train/model_config.h"

namespace trainrig::train {

// `path`: a .safetensors file, or a folder holding model.safetensors or
// model.safetensors.index.json. Returns ParamLayout(c).total() floats; the padded vocabulary
// rows are zero.
Result<std::vector<float>> read_hf_weights(const std::string& path, const ModelConfig& c);

}  // namespace trainrig::train

// The shape of a decoder-only transformer that `train` builds, in one of two families:
//   gpt2:  GPT-2 (Radford et al. 2019; the released configurations): learned positions,
//          pre-LayerNorm blocks with biases, GELU MLP of width 4C, tied input/output embeddings.
//   llama: Llama (Touvron et al. 2023, arXiv:2302.13971 §2.2; Llama 2/3 and Mistral follow it):
//          rotary position embeddings (Su et al. 2021, arXiv:2104.09864), pre-RMSNorm blocks
//          without biases (Zhang & Sennrich 2019), SwiGLU MLP (Shazeer 2020, arXiv:2002.05202),
//          grouped-query attention (Ainslie et al. 2023, arXiv:2305.13245) and an untied output
//          layer unless the config ties it.
// The vocabulary is padded to a multiple of 128 so the classifier GEMM has an aligned width; the
// padded rows exist in the embedding but never receive probability mass.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "plan/model_spec.h"

namespace trainrig::train {

enum class Arch { kGpt2, kLlama };
const char* arch_name(Arch a);  // "gpt2", "llama"

struct ModelConfig {
    std::string name = "custom";
    Arch arch = Arch::kGpt2;
    int layers = 0;    // L
    int heads = 0;     // NH
    int channels = 0;  // C
    int max_seq = 0;   // maximum T (rows of the position embedding; RoPE's context for llama)
    int vocab = 0;     // V: real tokens
    int padded_vocab = 0;
    // llama only (gpt2 keeps the defaults): key/value heads (GQA when below heads), the MLP's
    // intermediate width, RoPE's base, RMSNorm's epsilon, a tied output layer, q/k/v biases.
    int kv_heads = 0;
    int ffn = 0;
    double rope_theta = 10000;
    plan::RopeScaling rope_scaling;
    double norm_eps = 1e-5;
    bool tied = true;
    bool qkv_bias = false;

    int head_dim() const { return channels / heads; }
    int kv_head_count() const { return arch == Arch::kLlama ? kv_heads : heads; }
    int kv_width() const { return kv_head_count() * head_dim(); }
    // Rows of the fused q|k|v projection: C + 2·KVH·hd (3C for gpt2).
    int qkv_width() const { return channels + 2 * kv_width(); }
    // The MLP's hidden width: 4C for gpt2, the config's intermediate size for llama.
    int ffn_width() const { return arch == Arch::kLlama ? ffn : 4 * channels; }
    bool tied_output() const { return arch == Arch::kGpt2 || tied; }
    bool operator==(const ModelConfig&) const = default;
};

inline constexpr int kVocabAlignment = 128;
inline int pad_vocab(int vocab) {
    return (vocab + kVocabAlignment - 1) / kVocabAlignment * kVocabAlignment;
}

// GPT-2's sizes (tiny, gpt2, gpt2-medium, gpt2-large, gpt2-xl; vocab 50257, 1024 positions)
// and llama-tiny, for tests and quick CPU runs. Larger Llama shapes come from plan's model
// catalog (train/model_spec_bridge.h), so plan and train read one definition.
Result<ModelConfig> preset_config(std::string_view name);
std::vector<std::string> preset_names();

// Every rule a usable shape must follow, as one sentence naming the field.
Status validate(const ModelConfig& c);

// A stable digest of the shape (not of the name): a checkpoint from another shape is refused.
// GPT-2 shapes keep the digest they had before the llama family existed.
std::string config_hash(const ModelConfig& c);
std::string describe(const ModelConfig& c);  // "12 layers, 12 heads, 768 channels, ..."

// The shape as JSON (checkpoints' state.json, the device plugin's request) and back; a missing
// "arch" reads as gpt2, so older checkpoints still load.
nlohmann::json model_config_json(const ModelConfig& c);
Result<ModelConfig> model_config_from_json(const nlohmann::json& j, std::string_view where);

}  // namespace trainrig::train

// The shape of a GPT-2 model (Radford et al. 2019; the released configurations): learned
// positions, pre-LayerNorm blocks, GELU MLP of width 4C, tied input/output embeddings. The
// vocabulary is padded to a multiple of 128 so the classifier GEMM has an aligned width; the
// padded rows exist in the embedding but never receive probability mass.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainrig::train {

struct ModelConfig {
    std::string name = "custom";
    int layers = 0;    // L
    int heads = 0;     // NH
    int channels = 0;  // C
    int max_seq = 0;   // maximum T (rows of the position embedding)
    int vocab = 0;     // V: real tokens
    int padded_vocab = 0;

    int head_dim() const { return channels / heads; }
    bool operator==(const ModelConfig&) const = default;
};

inline constexpr int kVocabAlignment = 128;
inline int pad_vocab(int vocab) {
    return (vocab + kVocabAlignment - 1) / kVocabAlignment * kVocabAlignment;
}

// tiny, gpt2 (124M), gpt2-medium (350M), gpt2-large (774M), gpt2-xl (1.5B); vocab 50257 and
// 1024 positions unless the caller changes them.
Result<ModelConfig> preset_config(std::string_view name);
std::vector<std::string> preset_names();

// Every rule a usable shape must follow, as one sentence naming the field.
Status validate(const ModelConfig& c);

// A stable digest of the shape (not of the name): a checkpoint from another shape is refused.
std::string config_hash(const ModelConfig& c);
std::string describe(const ModelConfig& c);  // "12 layers, 12 heads, 768 channels, ..."

}  // namespace trainrig::train

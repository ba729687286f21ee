// Where each parameter tensor of a GPT-2 model lives in one flat buffer, in a fixed order that
// checkpoints, the optimizer, gradient all-reduce and the CUDA backend all share. Per-layer
// tensors are stacked: layer l of "qkv_w" is rows [l·3C, (l+1)·3C).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "train/model_config.h"

namespace trainrig::train {

enum class Param : int {
    kWte,        // (Vp, C) token embedding, tied with the classifier
    kWpe,        // (maxT, C) position embedding
    kLn1W,       // (L, C)
    kLn1B,       // (L, C)
    kQkvW,       // (L, 3C, C)
    kQkvB,       // (L, 3C)
    kAttnProjW,  // (L, C, C)
    kAttnProjB,  // (L, C)
    kLn2W,       // (L, C)
    kLn2B,       // (L, C)
    kFcW,        // (L, 4C, C)
    kFcB,        // (L, 4C)
    kFcProjW,    // (L, C, 4C)
    kFcProjB,    // (L, C)
    kLnfW,       // (C)
    kLnfB,       // (C)
};
inline constexpr int kParamCount = 16;

struct TensorSlot {
    std::string_view name;
    size_t offset = 0;    // elements from the start of the buffer
    size_t size = 0;      // elements
    bool matrix = false;  // 2-D weights (and embeddings) get weight decay; biases and norms do not
};

class ParamLayout {
public:
    explicit ParamLayout(const ModelConfig& c);
    const TensorSlot& operator[](Param p) const { return slots_[static_cast<int>(p)]; }
    const std::array<TensorSlot, kParamCount>& slots() const { return slots_; }
    size_t total() const { return total_; }
    // Parameters that multiply activations (all but biases, norms and the position table):
    // N of the PaLM FLOP count, the tied embedding counted once as the classifier over the real
    // vocabulary (the padded columns are computed but are not model work).
    size_t matmul_params() const;

private:
    std::array<TensorSlot, kParamCount> slots_{};
    size_t total_ = 0;
    size_t classifier_ = 0;  // V x C
};

}  // namespace trainrig::train

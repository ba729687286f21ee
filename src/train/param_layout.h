// Where each parameter tensor lives in one flat buffer, in a fixed order that checkpoints, the
// optimizer, gradient all-reduce and the CUDA backend all share. Per-layer tensors are stacked:
// layer l of "qkv_w" is rows [l·QKV, (l+1)·QKV). Both families use the same slots; a tensor a
// family does not have is empty (size 0), so a GPT-2 buffer is laid out exactly as before the
// llama family existed.
//
//   slot         gpt2                      llama
//   wte          (Vp, C) tied classifier   (Vp, C) token embedding
//   wpe          (maxT, C)                 -        (rotary positions have no table)
//   ln1_w/_b     (L, C) LayerNorm          (L, C) RMSNorm gain / -
//   qkv_w        (L, 3C, C)                (L, C + 2·KVH·hd, C): q | k | v rows
//   qkv_b        (L, 3C)                   (L, C + 2·KVH·hd) with qkv_bias, else -
//   attn_proj_w  (L, C, C)                 (L, C, C)  o_proj
//   attn_proj_b  (L, C)                    -
//   ln2_w/_b     (L, C)                    (L, C) / -
//   fc_w         (L, 4C, C)                (L, 2F, C): gate | up rows
//   fc_b         (L, 4C)                   -
//   fc_proj_w    (L, C, 4C)                (L, C, F)  down_proj
//   fc_proj_b    (L, C)                    -
//   lnf_w/_b     (C)                       (C) / -
//   lm_head      -                         (Vp, C) unless tied
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "train/model_config.h"

namespace trainrig::train {

enum class Param : int {
    kWte,
    kWpe,
    kLn1W,
    kLn1B,
    kQkvW,
    kQkvB,
    kAttnProjW,
    kAttnProjB,
    kLn2W,
    kLn2B,
    kFcW,
    kFcB,
    kFcProjW,
    kFcProjB,
    kLnfW,
    kLnfB,
    kLmHead,
};
inline constexpr int kParamCount = 17;

struct TensorSlot {
    std::string_view name;
    size_t offset = 0;    // elements from the start of the buffer
    size_t size = 0;      // elements; 0 when the family has no such tensor
    bool matrix = false;  // 2-D weights (and embeddings) get weight decay; biases and norms do not
    bool per_layer = false;  // stacked over the L blocks
};

class ParamLayout {
public:
    explicit ParamLayout(const ModelConfig& c);
    const TensorSlot& operator[](Param p) const { return slots_[static_cast<int>(p)]; }
    const std::array<TensorSlot, kParamCount>& slots() const { return slots_; }
    size_t total() const { return total_; }
    // The parameters of the model itself: total() less the padded vocabulary rows of the
    // embedding and of an untied output layer. plan counts the same (plan/model_spec.h).
    size_t model_params() const { return total_ - padding_; }
    // Parameters that multiply activations (all but biases, norms and the position table):
    // N of the PaLM FLOP count, the classifier counted once over the real vocabulary (the
    // padded columns are computed but are not model work).
    size_t matmul_params() const;
    // The classifier: the output layer, or the token embedding when tied.
    Param classifier() const { return (*this)[Param::kLmHead].size ? Param::kLmHead : Param::kWte; }

private:
    std::array<TensorSlot, kParamCount> slots_{};
    size_t total_ = 0;
    size_t padding_ = 0;
    size_t classifier_ = 0;  // V x C
};

}  // namespace trainrig::train

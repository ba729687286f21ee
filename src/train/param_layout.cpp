#include "train/param_layout.h"

namespace trainrig::train {

ParamLayout::ParamLayout(const ModelConfig& c) {
    const bool gpt2 = c.arch == Arch::kGpt2;
    const size_t L = c.layers, C = c.channels, Vp = c.padded_vocab, maxT = c.max_seq;
    const size_t QKV = c.qkv_width(), F = c.ffn_width();
    // GPT-2's MLP is F wide (4C); llama's fc holds the gate and up projections, 2F rows.
    const size_t fc_rows = gpt2 ? F : 2 * F;
    const size_t untied = c.tied_output() ? 0 : Vp * C;
    struct Shape {
        std::string_view name;
        size_t size;
        bool matrix, per_layer;
    };
    const std::array<Shape, kParamCount> shapes = {{
        {"wte", Vp * C, true, false},
        {"wpe", gpt2 ? maxT * C : 0, true, false},
        {"ln1_w", L * C, false, true},
        {"ln1_b", gpt2 ? L * C : 0, false, true},
        {"qkv_w", L * QKV * C, true, true},
        {"qkv_b", gpt2 || c.qkv_bias ? L * QKV : 0, false, true},
        {"attn_proj_w", L * C * C, true, true},
        {"attn_proj_b", gpt2 ? L * C : 0, false, true},
        {"ln2_w", L * C, false, true},
        {"ln2_b", gpt2 ? L * C : 0, false, true},
        {"fc_w", L * fc_rows * C, true, true},
        {"fc_b", gpt2 ? L * F : 0, false, true},
        {"fc_proj_w", L * C * F, true, true},
        {"fc_proj_b", gpt2 ? L * C : 0, false, true},
        {"lnf_w", C, false, false},
        {"lnf_b", gpt2 ? C : 0, false, false},
        {"lm_head", untied, true, false},
    }};
    classifier_ = static_cast<size_t>(c.vocab) * C;
    padding_ = (Vp - static_cast<size_t>(c.vocab)) * C * (untied ? 2 : 1);
    for (int i = 0; i < kParamCount; ++i) {
        slots_[i] = TensorSlot{shapes[i].name, total_, shapes[i].size, shapes[i].matrix,
                               shapes[i].per_layer};
        total_ += shapes[i].size;
    }
}

size_t ParamLayout::matmul_params() const {
    return classifier_ + (*this)[Param::kQkvW].size + (*this)[Param::kAttnProjW].size +
           (*this)[Param::kFcW].size + (*this)[Param::kFcProjW].size;
}

}  // namespace trainrig::train

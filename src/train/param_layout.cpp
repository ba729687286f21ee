#include "train/param_layout.h"

namespace trainrig::train {

ParamLayout::ParamLayout(const ModelConfig& c) {
    const size_t L = c.layers, C = c.channels, Vp = c.padded_vocab, maxT = c.max_seq;
    struct Shape {
        std::string_view name;
        size_t size;
        bool matrix;
    };
    const std::array<Shape, kParamCount> shapes = {{
        {"wte", Vp * C, true},
        {"wpe", maxT * C, true},
        {"ln1_w", L * C, false},
        {"ln1_b", L * C, false},
        {"qkv_w", L * 3 * C * C, true},
        {"qkv_b", L * 3 * C, false},
        {"attn_proj_w", L * C * C, true},
        {"attn_proj_b", L * C, false},
        {"ln2_w", L * C, false},
        {"ln2_b", L * C, false},
        {"fc_w", L * 4 * C * C, true},
        {"fc_b", L * 4 * C, false},
        {"fc_proj_w", L * C * 4 * C, true},
        {"fc_proj_b", L * C, false},
        {"lnf_w", C, false},
        {"lnf_b", C, false},
    }};
    classifier_ = static_cast<size_t>(c.vocab) * C;
    for (int i = 0; i < kParamCount; ++i) {
        slots_[i] = TensorSlot{shapes[i].name, total_, shapes[i].size, shapes[i].matrix};
        total_ += shapes[i].size;
    }
}

size_t ParamLayout::matmul_params() const {
    return classifier_ + (*this)[Param::kQkvW].size + (*this)[Param::kAttnProjW].size +
           (*this)[Param::kFcW].size + (*this)[Param::kFcProjW].size;
}

}  // namespace trainrig::train

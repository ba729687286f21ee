// A decoder-only transformer's forward and backward on the CPU (the reference backend), for both
// families of model_config.h: GPT-2 blocks and Llama blocks. Holds the parameters and their
// gradients (ParamLayout order) and the activations of the last forward pass, which backward
// consumes. float trains; double exists for the finite-difference gradient check.
#pragma once

#include <cstdint>
#include <vector>

#include "train/model_config.h"
#include "train/param_layout.h"

namespace trainrig::train::cpu {

template <class T>
class GptCpu {
public:
    explicit GptCpu(const ModelConfig& config);

    const ModelConfig& config() const { return config_; }
    const ParamLayout& layout() const { return layout_; }
    std::vector<T>& params() { return params_; }
    const std::vector<T>& params() const { return params_; }
    std::vector<T>& grads() { return grads_; }
    const std::vector<T>& grads() const { return grads_; }

    // N(0, 0.02) weights, the residual projections scaled by 1/√(2L), zero biases, unit norm
    // gains (init_weights.h); from a seeded generator, the same on every machine.
    void init_weights(uint64_t seed);

    // inputs and targets: B·T token ids below the vocabulary (the caller checks). Returns the
    // mean loss; targets may be null (logits only). T must not exceed max_seq.
    double forward(const uint32_t* inputs, const uint32_t* targets, int B, int Tn);
    // Adds the gradient of loss_scale × (mean loss of the last forward) to grads().
    void backward(T loss_scale);
    void zero_grads();

    // (B·T, Vp) logits of the last forward (before backward overwrites them).
    const std::vector<T>& logits() const { return logits_; }
    // Bytes held by activations and backward scratch for the last shape, and for any shape.
    size_t activation_bytes() const { return activation_bytes_for(config_, B_, T_); }
    static size_t activation_bytes_for(const ModelConfig& c, int B, int Tn);

private:
    // fch is the MLP's first projection (4C for GPT-2; gate | up, 2F, for Llama) and fch_gelu
    // its activation (GELU, or SwiGLU's F); Llama's norms keep no mean.
    struct LayerActs {
        std::vector<T> ln1, ln1_mean, ln1_rstd, qkv, atty, lse, res2, ln2, ln2_mean, ln2_rstd, fch,
            fch_gelu, res3;
    };
    void reserve(int B, int Tn);
    void norm_forward(T* out, T* mean, T* rstd, const T* inp, Param w, Param b, size_t layer,
                      size_t N);
    void norm_backward(T* dinp, const T* dout, const T* inp, Param w, Param b, size_t layer,
                       const T* mean, const T* rstd, size_t N);
    void mlp_activation_forward(LayerActs& a, size_t N);
    void mlp_activation_backward(const LayerActs& a, size_t N);
    const T* maybe(Param which) {
        return layout_[which].size ? params_.data() + layout_[which].offset : nullptr;
    }
    T* maybe_grad(Param which) {
        return layout_[which].size ? grads_.data() + layout_[which].offset : nullptr;
    }
    T* p(Param which) { return params_.data() + layout_[which].offset; }
    T* g(Param which) { return grads_.data() + layout_[which].offset; }

    ModelConfig config_;
    ParamLayout layout_;
    std::vector<T> params_, grads_;

    int B_ = 0, T_ = 0;
    std::vector<uint32_t> inputs_, targets_;
    std::vector<T> encoded_, lnf_, lnf_mean_, lnf_rstd_, logits_, losses_, row_lse_, scratch_;
    std::vector<T> rope_cos_, rope_sin_;  // (T, hd/2), Llama only
    std::vector<LayerActs> layers_;
    // Backward scratch, shared by all layers.
    std::vector<T> dres_, dln_, dqkv_, datty_, dfch_, dfch_gelu_;
};

extern template class GptCpu<float>;
extern template class GptCpu<double>;

}  // namespace trainrig::train::cpu

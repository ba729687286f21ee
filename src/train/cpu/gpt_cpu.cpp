#include "train/cpu/gpt_cpu.h"

#include <algorithm>
#include <cmath>

#include "train/cpu/ops.h"
#include "train/init_weights.h"

namespace trainrig::train::cpu {

template <class T>
GptCpu<T>::GptCpu(const ModelConfig& config)
    : config_(config), layout_(config), params_(layout_.total()), grads_(layout_.total()) {}

template <class T>
void GptCpu<T>::init_weights(uint64_t seed) {
    init_gpt2_weights(layout_, config_.layers, seed, std::span<T>(params_));
}

template <class T>
void GptCpu<T>::reserve(int B, int Tn) {
    if (B == B_ && Tn == T_) return;
    B_ = B;
    T_ = Tn;
    const size_t N = static_cast<size_t>(B) * Tn, C = config_.channels;
    const size_t NH = config_.heads, Vp = config_.padded_vocab;
    inputs_.resize(N);
    targets_.resize(N);
    encoded_.assign(N * C, 0);
    layers_.assign(config_.layers, {});
    for (LayerActs& a : layers_) {
        for (auto* v : {&a.ln1, &a.atty, &a.res2, &a.ln2, &a.res3}) v->assign(N * C, 0);
        for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) v->assign(N, 0);
        a.qkv.assign(N * 3 * C, 0);
        a.lse.assign(static_cast<size_t>(B) * NH * Tn, 0);
        a.fch.assign(N * 4 * C, 0);
        a.fch_gelu.assign(N * 4 * C, 0);
    }
    lnf_.assign(N * C, 0);
    lnf_mean_.assign(N, 0);
    lnf_rstd_.assign(N, 0);
    logits_.assign(N * Vp, 0);
    losses_.assign(N, 0);
    row_lse_.assign(N, 0);
    scratch_.assign(N * C, 0);
    dres_.assign(N * C, 0);
    dln_.assign(N * C, 0);
    datty_.assign(N * C, 0);
    dqkv_.assign(N * 3 * C, 0);
    dfch_.assign(N * 4 * C, 0);
    dfch_gelu_.assign(N * 4 * C, 0);
}

template <class T>
size_t GptCpu<T>::activation_bytes_for(const ModelConfig& c, int B, int Tn) {
    // Mirrors reserve(): per layer ln1, atty, res2, ln2, res3 (C each), four row statistics,
    // qkv (3C), fch and fch_gelu (4C each), the attention log-sum-exps; then the encoder
    // output, lnf, scratch (C each), logits (Vp), losses and row statistics, and the backward
    // scratch dres, dln, datty (C each), dqkv (3C), dfch, dfch_gelu (4C each).
    const size_t N = static_cast<size_t>(B) * Tn, C = c.channels;
    const size_t per_layer =
        N * C * 5 + N * 4 + N * 3 * C + N * 8 * C + static_cast<size_t>(B) * c.heads * Tn;
    const size_t rest =
        N * C * 3 + N * 3 + N * c.padded_vocab + N * 2 + N * C * 3 + N * 3 * C + N * 8 * C;
    return (per_layer * c.layers + rest) * sizeof(T) + N * 2 * sizeof(uint32_t);
}

template <class T>
double GptCpu<T>::forward(const uint32_t* inputs, const uint32_t* targets, int B, int Tn) {
    reserve(B, Tn);
    const size_t N = static_cast<size_t>(B) * Tn;
    const int C = config_.channels, NH = config_.heads, L = config_.layers;
    const size_t uC = C;
    std::copy(inputs, inputs + N, inputs_.begin());
    if (targets != nullptr) std::copy(targets, targets + N, targets_.begin());

    encoder_forward(encoded_.data(), inputs_.data(), p(Param::kWte), p(Param::kWpe), B, Tn, C);
    const T* residual = encoded_.data();
    for (int l = 0; l < L; ++l) {
        LayerActs& a = layers_[l];
        const size_t ul = l;
        layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), residual,
                          p(Param::kLn1W) + ul * uC, p(Param::kLn1B) + ul * uC, N, C);
        matmul_forward(a.qkv.data(), a.ln1.data(), p(Param::kQkvW) + ul * 3 * uC * uC,
                       p(Param::kQkvB) + ul * 3 * uC, N, C, 3 * C);
        attention_forward(a.atty.data(), a.lse.data(), a.qkv.data(), B, Tn, C, NH);
        matmul_forward(scratch_.data(), a.atty.data(), p(Param::kAttnProjW) + ul * uC * uC,
                       p(Param::kAttnProjB) + ul * uC, N, C, C);
        residual_forward(a.res2.data(), residual, scratch_.data(), N * uC);
        layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(),
                          p(Param::kLn2W) + ul * uC, p(Param::kLn2B) + ul * uC, N, C);
        matmul_forward(a.fch.data(), a.ln2.data(), p(Param::kFcW) + ul * 4 * uC * uC,
                       p(Param::kFcB) + ul * 4 * uC, N, C, 4 * C);
        gelu_forward(a.fch_gelu.data(), a.fch.data(), N * 4 * uC);
        matmul_forward(scratch_.data(), a.fch_gelu.data(), p(Param::kFcProjW) + ul * 4 * uC * uC,
                       p(Param::kFcProjB) + ul * uC, N, 4 * C, C);
        residual_forward(a.res3.data(), a.res2.data(), scratch_.data(), N * uC);
        residual = a.res3.data();
    }
    layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), residual, p(Param::kLnfW),
                      p(Param::kLnfB), N, C);
    matmul_forward(logits_.data(), lnf_.data(), p(Param::kWte), static_cast<const T*>(nullptr), N,
                   C, config_.padded_vocab);
    if (targets == nullptr) return 0;
    crossentropy_forward(losses_.data(), row_lse_.data(), logits_.data(), targets_.data(), N,
                         config_.vocab, config_.padded_vocab);
    double sum = 0;  // in a fixed order: the same total for any thread count
    for (size_t n = 0; n < N; ++n) sum += static_cast<double>(losses_[n]);
    return sum / static_cast<double>(N);
}

template <class T>
void GptCpu<T>::backward(T loss_scale) {
    const size_t N = static_cast<size_t>(B_) * T_;
    const int C = config_.channels, NH = config_.heads, L = config_.layers;
    const size_t uC = C;
    crossentropy_backward(logits_.data(), row_lse_.data(), targets_.data(),
                          loss_scale / static_cast<T>(N), N, config_.vocab, config_.padded_vocab);
    std::fill(dln_.begin(), dln_.end(), T(0));
    matmul_backward(dln_.data(), g(Param::kWte), static_cast<T*>(nullptr), logits_.data(),
                    lnf_.data(), p(Param::kWte), N, C, config_.padded_vocab);
    std::fill(dres_.begin(), dres_.end(), T(0));
    const T* last = L > 0 ? layers_[L - 1].res3.data() : encoded_.data();
    layernorm_backward(dres_.data(), g(Param::kLnfW), g(Param::kLnfB), dln_.data(), last,
                       p(Param::kLnfW), lnf_mean_.data(), lnf_rstd_.data(), N, C);
    for (int l = L - 1; l >= 0; --l) {
        LayerActs& a = layers_[l];
        const size_t ul = l;
        const T* residual = l == 0 ? encoded_.data() : layers_[l - 1].res3.data();
        // res3 = res2 + fc_proj(gelu(fc(ln2(res2)))); dres_ holds d res3 and becomes d res2.
        std::fill(dfch_gelu_.begin(), dfch_gelu_.end(), T(0));
        matmul_backward(dfch_gelu_.data(), g(Param::kFcProjW) + ul * 4 * uC * uC,
                        g(Param::kFcProjB) + ul * uC, dres_.data(), a.fch_gelu.data(),
                        p(Param::kFcProjW) + ul * 4 * uC * uC, N, 4 * C, C);
        std::fill(dfch_.begin(), dfch_.end(), T(0));
        gelu_backward(dfch_.data(), a.fch.data(), dfch_gelu_.data(), N * 4 * uC);
        std::fill(dln_.begin(), dln_.end(), T(0));
        matmul_backward(dln_.data(), g(Param::kFcW) + ul * 4 * uC * uC,
                        g(Param::kFcB) + ul * 4 * uC, dfch_.data(), a.ln2.data(),
                        p(Param::kFcW) + ul * 4 * uC * uC, N, C, 4 * C);
        layernorm_backward(dres_.data(), g(Param::kLn2W) + ul * uC, g(Param::kLn2B) + ul * uC,
                           dln_.data(), a.res2.data(), p(Param::kLn2W) + ul * uC, a.ln2_mean.data(),
                           a.ln2_rstd.data(), N, C);
        // res2 = residual + attn_proj(attention(qkv(ln1(residual)))); dres_ becomes d residual.
        std::fill(datty_.begin(), datty_.end(), T(0));
        matmul_backward(datty_.data(), g(Param::kAttnProjW) + ul * uC * uC,
                        g(Param::kAttnProjB) + ul * uC, dres_.data(), a.atty.data(),
                        p(Param::kAttnProjW) + ul * uC * uC, N, C, C);
        std::fill(dqkv_.begin(), dqkv_.end(), T(0));
        attention_backward(dqkv_.data(), datty_.data(), a.qkv.data(), a.atty.data(), a.lse.data(),
                           B_, T_, C, NH);
        std::fill(dln_.begin(), dln_.end(), T(0));
        matmul_backward(dln_.data(), g(Param::kQkvW) + ul * 3 * uC * uC,
                        g(Param::kQkvB) + ul * 3 * uC, dqkv_.data(), a.ln1.data(),
                        p(Param::kQkvW) + ul * 3 * uC * uC, N, C, 3 * C);
        layernorm_backward(dres_.data(), g(Param::kLn1W) + ul * uC, g(Param::kLn1B) + ul * uC,
                           dln_.data(), residual, p(Param::kLn1W) + ul * uC, a.ln1_mean.data(),
                           a.ln1_rstd.data(), N, C);
    }
    encoder_backward(g(Param::kWte), g(Param::kWpe), dres_.data(), inputs_.data(), B_, T_, C);
}

template <class T>
void GptCpu<T>::zero_grads() {
    std::fill(grads_.begin(), grads_.end(), T(0));
}

template class GptCpu<float>;
template class GptCpu<double>;

}  // namespace trainrig::train::cpu

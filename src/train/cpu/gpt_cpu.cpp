#include "train/cpu/gpt_cpu.h"

#include <algorithm>
#include <cmath>

#include "train/cpu/ops.h"
#include "train/init_weights.h"
#include "train/rope_table.h"

namespace trainrig::train::cpu {

template <class T>
GptCpu<T>::GptCpu(const ModelConfig& config)
    : config_(config), layout_(config), params_(layout_.total()), grads_(layout_.total()) {}

template <class T>
void GptCpu<T>::init_weights(uint64_t seed) {
    init_model_weights(layout_, config_.layers, seed, std::span<T>(params_));
}

namespace {

// Elements of one layer's slice of a stacked tensor.
size_t per_layer(const ParamLayout& layout, Param p, int layers) {
    return layout[p].size / static_cast<size_t>(layers);
}

}  // namespace

template <class T>
void GptCpu<T>::reserve(int B, int Tn) {
    if (B == B_ && Tn == T_) return;
    B_ = B;
    T_ = Tn;
    const bool llama = config_.arch == Arch::kLlama;
    const size_t N = static_cast<size_t>(B) * Tn, C = config_.channels;
    const size_t NH = config_.heads, Vp = config_.padded_vocab;
    const size_t QKV = config_.qkv_width(), F = config_.ffn_width(), FC = llama ? 2 * F : F;
    const size_t stats = llama ? 0 : N;  // RMSNorm keeps no mean
    inputs_.resize(N);
    targets_.resize(N);
    encoded_.assign(N * C, 0);
    layers_.assign(config_.layers, {});
    for (LayerActs& a : layers_) {
        for (auto* v : {&a.ln1, &a.atty, &a.res2, &a.ln2, &a.res3}) v->assign(N * C, 0);
        for (auto* v : {&a.ln1_rstd, &a.ln2_rstd}) v->assign(N, 0);
        for (auto* v : {&a.ln1_mean, &a.ln2_mean}) v->assign(stats, 0);
        a.qkv.assign(N * QKV, 0);
        a.lse.assign(static_cast<size_t>(B) * NH * Tn, 0);
        a.fch.assign(N * FC, 0);
        a.fch_gelu.assign(N * F, 0);
    }
    lnf_.assign(N * C, 0);
    lnf_mean_.assign(stats, 0);
    lnf_rstd_.assign(N, 0);
    logits_.assign(N * Vp, 0);
    losses_.assign(N, 0);
    row_lse_.assign(N, 0);
    scratch_.assign(N * C, 0);
    dres_.assign(N * C, 0);
    dln_.assign(N * C, 0);
    datty_.assign(N * C, 0);
    dqkv_.assign(N * QKV, 0);
    dfch_.assign(N * FC, 0);
    dfch_gelu_.assign(N * F, 0);
    if (llama) rope_table(config_, Tn, rope_cos_, rope_sin_);
}

template <class T>
size_t GptCpu<T>::activation_bytes_for(const ModelConfig& c, int B, int Tn) {
    // Mirrors reserve(): per layer ln1, atty, res2, ln2, res3 (C each), the norms' statistics
    // (4 per row; 2 for RMSNorm), qkv, the MLP's first projection and its activation, the
    // attention log-sum-exps; then the encoder output, lnf, scratch (C each), logits (Vp),
    // losses and row statistics, the backward scratch dres, dln, datty (C each), dqkv and the
    // two MLP buffers, and the RoPE table.
    const bool llama = c.arch == Arch::kLlama;
    const size_t N = static_cast<size_t>(B) * Tn, C = c.channels;
    const size_t QKV = c.qkv_width(), F = c.ffn_width(), FC = llama ? 2 * F : F;
    const size_t stats = llama ? 2 : 4;
    const size_t per_layer =
        N * C * 5 + N * stats + N * QKV + N * (FC + F) + static_cast<size_t>(B) * c.heads * Tn;
    const size_t rope = llama ? static_cast<size_t>(Tn) * c.head_dim() : 0;
    const size_t rest = N * C * 3 + N * (stats / 2 + 1) + N * c.padded_vocab + N * 2 + N * C * 3 +
                        N * QKV + N * (FC + F) + rope;
    return (per_layer * c.layers + rest) * sizeof(T) + N * 2 * sizeof(uint32_t);
}

template <class T>
void GptCpu<T>::norm_forward(T* out, T* mean, T* rstd, const T* inp, Param w, Param b, size_t layer,
                             size_t N) {
    const int C = config_.channels;
    const T* wp = p(w) + layer * C;
    if (config_.arch == Arch::kLlama)
        rmsnorm_forward(out, rstd, inp, wp, N, C, config_.norm_eps);
    else
        layernorm_forward(out, mean, rstd, inp, wp, p(b) + layer * C, N, C);
}

template <class T>
void GptCpu<T>::norm_backward(T* dinp, const T* dout, const T* inp, Param w, Param b, size_t layer,
                              const T* mean, const T* rstd, size_t N) {
    const int C = config_.channels;
    if (config_.arch == Arch::kLlama)
        rmsnorm_backward(dinp, g(w) + layer * C, dout, inp, p(w) + layer * C, rstd, N, C);
    else
        layernorm_backward(dinp, g(w) + layer * C, g(b) + layer * C, dout, inp, p(w) + layer * C,
                           mean, rstd, N, C);
}

template <class T>
void GptCpu<T>::mlp_activation_forward(LayerActs& a, size_t N) {
    const int F = config_.ffn_width();
    if (config_.arch == Arch::kLlama)
        swiglu_forward(a.fch_gelu.data(), a.fch.data(), N, F);
    else
        gelu_forward(a.fch_gelu.data(), a.fch.data(), N * F);
}

template <class T>
void GptCpu<T>::mlp_activation_backward(const LayerActs& a, size_t N) {
    const int F = config_.ffn_width();
    if (config_.arch == Arch::kLlama)
        swiglu_backward(dfch_.data(), a.fch.data(), dfch_gelu_.data(), N, F);
    else
        gelu_backward(dfch_.data(), a.fch.data(), dfch_gelu_.data(), N * F);
}

template <class T>
double GptCpu<T>::forward(const uint32_t* inputs, const uint32_t* targets, int B, int Tn) {
    reserve(B, Tn);
    const size_t N = static_cast<size_t>(B) * Tn;
    const int C = config_.channels, NH = config_.heads, L = config_.layers;
    const int KVH = config_.kv_head_count(), hd = config_.head_dim();
    const int QKV = config_.qkv_width(), F = config_.ffn_width();
    const int FC = static_cast<int>(per_layer(layout_, Param::kFcW, L) / C);
    const bool llama = config_.arch == Arch::kLlama;
    std::copy(inputs, inputs + N, inputs_.begin());
    if (targets != nullptr) std::copy(targets, targets + N, targets_.begin());
    // The slice of a stacked tensor for layer l; null for a tensor this family lacks.
    auto w = [&](Param which, size_t l) -> const T* {
        const T* base = maybe(which);
        return base ? base + l * per_layer(layout_, which, L) : nullptr;
    };

    encoder_forward(encoded_.data(), inputs_.data(), p(Param::kWte), maybe(Param::kWpe), B, Tn, C);
    const T* residual = encoded_.data();
    for (int l = 0; l < L; ++l) {
        LayerActs& a = layers_[l];
        const size_t ul = l;
        norm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), residual, Param::kLn1W,
                     Param::kLn1B, ul, N);
        matmul_forward(a.qkv.data(), a.ln1.data(), w(Param::kQkvW, ul), w(Param::kQkvB, ul), N, C,
                       QKV);
        if (llama)
            rope_forward(a.qkv.data(), rope_cos_.data(), rope_sin_.data(), B, Tn, NH, KVH, hd);
        attention_forward(a.atty.data(), a.lse.data(), a.qkv.data(), B, Tn, NH, KVH, hd);
        matmul_forward(scratch_.data(), a.atty.data(), w(Param::kAttnProjW, ul),
                       w(Param::kAttnProjB, ul), N, C, C);
        residual_forward(a.res2.data(), residual, scratch_.data(), N * C);
        norm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(),
                     Param::kLn2W, Param::kLn2B, ul, N);
        matmul_forward(a.fch.data(), a.ln2.data(), w(Param::kFcW, ul), w(Param::kFcB, ul), N, C,
                       FC);
        mlp_activation_forward(a, N);
        matmul_forward(scratch_.data(), a.fch_gelu.data(), w(Param::kFcProjW, ul),
                       w(Param::kFcProjB, ul), N, F, C);
        residual_forward(a.res3.data(), a.res2.data(), scratch_.data(), N * C);
        residual = a.res3.data();
    }
    norm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), residual, Param::kLnfW,
                 Param::kLnfB, 0, N);
    matmul_forward(logits_.data(), lnf_.data(), p(layout_.classifier()),
                   static_cast<const T*>(nullptr), N, C, config_.padded_vocab);
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
    const int KVH = config_.kv_head_count(), hd = config_.head_dim();
    const int QKV = config_.qkv_width(), F = config_.ffn_width();
    const int FC = static_cast<int>(per_layer(layout_, Param::kFcW, L) / C);
    const bool llama = config_.arch == Arch::kLlama;
    auto w = [&](Param which, size_t l) -> const T* {
        const T* base = maybe(which);
        return base ? base + l * per_layer(layout_, which, L) : nullptr;
    };
    auto gw = [&](Param which, size_t l) -> T* {
        T* base = maybe_grad(which);
        return base ? base + l * per_layer(layout_, which, L) : nullptr;
    };
    auto zero = [](std::vector<T>& v) { std::fill(v.begin(), v.end(), T(0)); };

    crossentropy_backward(logits_.data(), row_lse_.data(), targets_.data(),
                          loss_scale / static_cast<T>(N), N, config_.vocab, config_.padded_vocab);
    zero(dln_);
    const Param classifier = layout_.classifier();
    matmul_backward(dln_.data(), g(classifier), static_cast<T*>(nullptr), logits_.data(),
                    lnf_.data(), p(classifier), N, C, config_.padded_vocab);
    zero(dres_);
    const T* last = L > 0 ? layers_[L - 1].res3.data() : encoded_.data();
    norm_backward(dres_.data(), dln_.data(), last, Param::kLnfW, Param::kLnfB, 0, lnf_mean_.data(),
                  lnf_rstd_.data(), N);
    for (int l = L - 1; l >= 0; --l) {
        LayerActs& a = layers_[l];
        const size_t ul = l;
        const T* residual = l == 0 ? encoded_.data() : layers_[l - 1].res3.data();
        // res3 = res2 + fc_proj(act(fc(ln2(res2)))); dres_ holds d res3 and becomes d res2.
        zero(dfch_gelu_);
        matmul_backward(dfch_gelu_.data(), gw(Param::kFcProjW, ul), gw(Param::kFcProjB, ul),
                        dres_.data(), a.fch_gelu.data(), w(Param::kFcProjW, ul), N, F, C);
        zero(dfch_);
        mlp_activation_backward(a, N);
        zero(dln_);
        matmul_backward(dln_.data(), gw(Param::kFcW, ul), gw(Param::kFcB, ul), dfch_.data(),
                        a.ln2.data(), w(Param::kFcW, ul), N, C, FC);
        norm_backward(dres_.data(), dln_.data(), a.res2.data(), Param::kLn2W, Param::kLn2B, ul,
                      a.ln2_mean.data(), a.ln2_rstd.data(), N);
        // res2 = residual + attn_proj(attention(qkv(ln1(residual)))); dres_ becomes d residual.
        zero(datty_);
        matmul_backward(datty_.data(), gw(Param::kAttnProjW, ul), gw(Param::kAttnProjB, ul),
                        dres_.data(), a.atty.data(), w(Param::kAttnProjW, ul), N, C, C);
        zero(dqkv_);
        attention_backward(dqkv_.data(), datty_.data(), a.qkv.data(), a.atty.data(), a.lse.data(),
                           B_, T_, NH, KVH, hd);
        if (llama)
            rope_backward(dqkv_.data(), rope_cos_.data(), rope_sin_.data(), B_, T_, NH, KVH, hd);
        zero(dln_);
        matmul_backward(dln_.data(), gw(Param::kQkvW, ul), gw(Param::kQkvB, ul), dqkv_.data(),
                        a.ln1.data(), w(Param::kQkvW, ul), N, C, QKV);
        norm_backward(dres_.data(), dln_.data(), residual, Param::kLn1W, Param::kLn1B, ul,
                      a.ln1_mean.data(), a.ln1_rstd.data(), N);
    }
    encoder_backward(g(Param::kWte), maybe_grad(Param::kWpe), dres_.data(), inputs_.data(), B_, T_,
                     C);
}

template <class T>
void GptCpu<T>::zero_grads() {
    std::fill(grads_.begin(), grads_.end(), T(0));
}

template class GptCpu<float>;
template class GptCpu<double>;

}  // namespace trainrig::train::cpu

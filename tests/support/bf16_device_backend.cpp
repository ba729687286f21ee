#include "bf16_device_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/fnv1a.h"
#include "train/cpu/ops.h"
#include "train/init_weights.h"
#include "train/param_layout.h"

namespace trainrig::train::testing {

float round_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

namespace {

void round_all(float* x, size_t n) {
    for (size_t i = 0; i < n; ++i) x[i] = round_bf16(x[i]);
}
void round_all(std::vector<float>& v) { round_all(v.data(), v.size()); }

float dot(const float* a, const float* b, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

// attention.cu's forward: fp32 scores of bf16 q and k, the row's exponentials summed in fp32
// and rounded to bf16 where they multiply V, the output rounded once.
void attention_forward(float* out, float* lse, const float* qkv, int B, int T, int C, int NH) {
    const int hs = C / NH;
    const size_t C3 = 3 * static_cast<size_t>(C);
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    std::vector<float> p(static_cast<size_t>(T)), o(static_cast<size_t>(hs));
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < NH; ++h) {
            const float* base = qkv + static_cast<size_t>(b) * T * C3 + static_cast<size_t>(h) * hs;
            for (int t = 0; t < T; ++t) {
                const float* q = base + t * C3;
                float mx = -std::numeric_limits<float>::infinity();
                for (int s = 0; s <= t; ++s) {
                    p[s] = dot(q, base + s * C3 + C, hs) * scale;
                    mx = std::max(mx, p[s]);
                }
                float sum = 0;
                for (int s = 0; s <= t; ++s) {
                    const float e = std::exp(p[s] - mx);
                    sum += e;
                    p[s] = round_bf16(e);
                }
                std::fill(o.begin(), o.end(), 0.0f);
                for (int s = 0; s <= t; ++s) {
                    const float* v = base + s * C3 + 2 * static_cast<size_t>(C);
                    for (int i = 0; i < hs; ++i) o[i] += p[s] * v[i];
                }
                float* dst =
                    out + (static_cast<size_t>(b) * T + t) * C + static_cast<size_t>(h) * hs;
                for (int i = 0; i < hs; ++i) dst[i] = round_bf16(o[i] / sum);
                lse[(static_cast<size_t>(b) * NH + h) * T + t] = mx + std::log(sum);
            }
        }
}

// attention.cu's backward: D from the bf16 dO and O, P and dS rounded to bf16 where they enter
// the products, fp32 accumulation, dQ and dK scaled once, every gradient rounded once.
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, int B, int T, int C, int NH) {
    const int hs = C / NH;
    const size_t C3 = 3 * static_cast<size_t>(C);
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    std::fill(dqkv, dqkv + static_cast<size_t>(B) * T * C3, 0.0f);
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < NH; ++h) {
            const size_t hoff = static_cast<size_t>(h) * hs;
            const float* base = qkv + static_cast<size_t>(b) * T * C3 + hoff;
            float* dbase = dqkv + static_cast<size_t>(b) * T * C3 + hoff;
            for (int t = 0; t < T; ++t) {
                const size_t row = static_cast<size_t>(b) * T + t;
                const float* q = base + t * C3;
                const float* dO = dout + row * C + hoff;
                const float D = dot(dO, out + row * C + hoff, hs);
                const float l = lse[(static_cast<size_t>(b) * NH + h) * T + t];
                float* dq = dbase + t * C3;
                for (int s = 0; s <= t; ++s) {
                    const float* k = base + s * C3 + C;
                    const float* v = k + C;
                    const float p = std::exp(dot(q, k, hs) * scale - l);
                    const float ds = round_bf16(p * (dot(dO, v, hs) - D));
                    const float pb = round_bf16(p);
                    float* dk = dbase + s * C3 + C;
                    float* dv = dk + C;
                    for (int i = 0; i < hs; ++i) {
                        dq[i] += ds * k[i];
                        dk[i] += ds * q[i];
                        dv[i] += pb * dO[i];
                    }
                }
            }
            for (int t = 0; t < T; ++t)
                for (int part = 0; part < 3; ++part) {
                    float* d = dbase + t * C3 + static_cast<size_t>(part) * C;
                    for (int i = 0; i < hs; ++i) d[i] = round_bf16(part < 2 ? d[i] * scale : d[i]);
                }
        }
}

struct LayerActs {
    std::vector<float> ln1, ln1_mean, ln1_rstd, qkv, atty, lse, res2, ln2, ln2_mean, ln2_rstd, fch,
        fch_gelu, res3;
};

class Bf16DeviceBackend final : public Backend {
public:
    Bf16DeviceBackend(const ModelConfig& c, const OptimizerConfig& opt, DeviceFault fault)
        : config_(c),
          opt_(opt),
          fault_(fault),
          layout_(c),
          master_(layout_.total()),
          weights_(layout_.total()),
          grads_(layout_.total()),
          m_(layout_.total()),
          v_(layout_.total()) {}

    std::string name() const override { return "bf16-emulated device"; }
    const ModelConfig& config() const override { return config_; }

    Status init_weights(uint64_t seed) override {
        TRAINRIG_TRY(supported());
        init_model_weights(layout_, config_.layers, seed, std::span<float>(master_));
        sync_weights();
        return ok_status();
    }
    Status zero_grads() override {
        std::fill(grads_.begin(), grads_.end(), 0.0f);
        return ok_status();
    }
    Result<double> forward(const uint32_t* inputs, const uint32_t* targets, int B, int T) override;
    Status backward(float loss_scale, bool last) override;
    Status all_reduce_grads(Communicator&) override { return ok_status(); }
    Result<double> grad_norm() override { return global_norm(grads_); }
    Status update(double lr, int64_t t, double norm) override;
    Status save_state(CheckpointState& s) override {
        s.params = master_;
        s.adam_m = m_;
        s.adam_v = v_;
        return ok_status();
    }
    Status load_state(const CheckpointState& s) override {
        TRAINRIG_TRY(supported());
        master_ = s.params;
        m_ = s.adam_m;
        v_ = s.adam_v;
        sync_weights();
        return ok_status();
    }
    Status copy_grads(std::vector<float>& out) override {
        out = grads_;
        return ok_status();
    }
    Status copy_logits(std::vector<float>& out) override {
        out = logits_;
        return ok_status();
    }
    Result<uint64_t> params_digest() override {
        return fnv1a64(master_.data(), master_.size() * sizeof(float));
    }
    size_t peak_memory_bytes() const override { return 0; }

private:
    // The emulation follows the GPT-2 device path only (3C-wide qkv, LayerNorm, GELU, learned
    // positions, tied classifier): a Llama shape would be mis-sized and mis-computed, not
    // emulated, so it is refused before anything runs.
    Status supported() const {
        if (config_.arch == Arch::kGpt2) return ok_status();
        return Status(Errc::kUnsupported,
                      fmt::format("the bf16 emulation of the CUDA backend builds GPT-2 blocks "
                                  "only, not {} blocks",
                                  arch_name(config_.arch)),
                      "compare a Llama shape on a GPU (scripts/gpu-check.sh, step train-llama)");
    }
    // The bf16 copy every pass reads, as AdamW's kernel writes it beside the master weights.
    void sync_weights() {
        weights_ = master_;
        round_all(weights_);
    }
    size_t at(Param p, int l) const {
        const TensorSlot& s = layout_[p];
        return s.offset + static_cast<size_t>(l) * (s.size / static_cast<size_t>(config_.layers));
    }
    const float* w(Param p, int l = 0) const { return weights_.data() + at(p, l); }
    float* g(Param p, int l = 0) { return grads_.data() + at(p, l); }
    void reserve(int B, int T);
    // out = round(inp · wᵀ + bias + residual): cuBLASLt's fused epilogue, one rounding.
    void linear(std::vector<float>& out, const std::vector<float>& inp, const float* wt,
                const float* bias, const float* residual, int C, int OC) const;
    void bias_backward(float* db, const std::vector<float>& dout, int OC) const;

    ModelConfig config_;
    OptimizerConfig opt_;
    DeviceFault fault_;
    ParamLayout layout_;
    std::vector<float> master_, weights_, grads_, m_, v_;

    int B_ = 0, T_ = 0;
    size_t N_ = 0;
    std::vector<uint32_t> tokens_, targets_;
    std::vector<float> encoded_, lnf_, lnf_mean_, lnf_rstd_, logits_, losses_, row_lse_;
    std::vector<LayerActs> layers_;
    std::vector<float> dres_, dres_b_, dbuf_, dfch_, dqkv_, datty_, dln_;
};

void Bf16DeviceBackend::reserve(int B, int T) {
    if (B == B_ && T == T_) return;
    B_ = B;
    T_ = T;
    N_ = static_cast<size_t>(B) * T;
    const size_t N = N_, C = static_cast<size_t>(config_.channels);
    tokens_.assign(N, 0);
    targets_.assign(N, 0);
    encoded_.assign(N * C, 0);
    layers_.assign(static_cast<size_t>(config_.layers), {});
    for (LayerActs& a : layers_) {
        for (auto* v : {&a.ln1, &a.atty, &a.res2, &a.ln2, &a.res3}) v->assign(N * C, 0);
        for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) v->assign(N, 0);
        a.qkv.assign(N * 3 * C, 0);
        a.lse.assign(static_cast<size_t>(B) * config_.heads * T, 0);
        a.fch.assign(N * 4 * C, 0);
        a.fch_gelu.assign(N * 4 * C, 0);
    }
    for (auto* v : {&lnf_, &dres_, &dres_b_, &datty_, &dln_}) v->assign(N * C, 0);
    for (auto* v : {&lnf_mean_, &lnf_rstd_, &losses_, &row_lse_}) v->assign(N, 0);
    logits_.assign(N * static_cast<size_t>(config_.padded_vocab), 0);
    dqkv_.assign(N * 3 * C, 0);
    dbuf_.assign(N * 4 * C, 0);
    dfch_.assign(N * 4 * C, 0);
}

void Bf16DeviceBackend::linear(std::vector<float>& out, const std::vector<float>& inp,
                               const float* wt, const float* bias, const float* residual, int C,
                               int OC) const {
    cpu::matmul_forward(out.data(), inp.data(), wt, bias, N_, C, OC);
    if (residual != nullptr)
        for (size_t i = 0; i < N_ * static_cast<size_t>(OC); ++i) out[i] += residual[i];
    round_all(out.data(), N_ * static_cast<size_t>(OC));
}

// column_sums.cu: Σ over rows of the (fp32 or bf16-valued) gradient, in fp32.
void Bf16DeviceBackend::bias_backward(float* db, const std::vector<float>& dout, int OC) const {
    for (int j = 0; j < OC; ++j) {
        float s = 0;
        for (size_t n = 0; n < N_; ++n) s += dout[n * static_cast<size_t>(OC) + j];
        db[j] += s;
    }
}

Result<double> Bf16DeviceBackend::forward(const uint32_t* inputs, const uint32_t* targets, int B,
                                          int T) {
    TRAINRIG_TRY(supported());
    reserve(B, T);
    const int C = config_.channels, NH = config_.heads, L = config_.layers;
    std::copy(inputs, inputs + N_, tokens_.begin());
    if (targets != nullptr) std::copy(targets, targets + N_, targets_.begin());
    cpu::encoder_forward(encoded_.data(), tokens_.data(), w(Param::kWte), w(Param::kWpe), B, T, C);
    round_all(encoded_);
    const float* residual = encoded_.data();
    for (int l = 0; l < L; ++l) {
        LayerActs& a = layers_[static_cast<size_t>(l)];
        cpu::layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), residual,
                               w(Param::kLn1W, l), w(Param::kLn1B, l), N_, C);
        round_all(a.ln1);
        linear(a.qkv, a.ln1, w(Param::kQkvW, l), w(Param::kQkvB, l), nullptr, C, 3 * C);
        attention_forward(a.atty.data(), a.lse.data(), a.qkv.data(), B, T, C, NH);
        linear(a.res2, a.atty, w(Param::kAttnProjW, l), w(Param::kAttnProjB, l), residual, C, C);
        cpu::layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(),
                               w(Param::kLn2W, l), w(Param::kLn2B, l), N_, C);
        round_all(a.ln2);
        linear(a.fch, a.ln2, w(Param::kFcW, l), w(Param::kFcB, l), nullptr, C, 4 * C);
        cpu::gelu_forward(a.fch_gelu.data(), a.fch.data(), a.fch.size());
        round_all(a.fch_gelu);
        linear(a.res3, a.fch_gelu, w(Param::kFcProjW, l), w(Param::kFcProjB, l), a.res2.data(),
               4 * C, C);
        residual = a.res3.data();
    }
    cpu::layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), residual,
                           w(Param::kLnfW), w(Param::kLnfB), N_, C);
    round_all(lnf_);
    linear(logits_, lnf_, w(Param::kWte), nullptr, nullptr, C, config_.padded_vocab);
    if (targets == nullptr) return 0.0;
    cpu::crossentropy_forward(losses_.data(), row_lse_.data(), logits_.data(), targets_.data(), N_,
                              config_.vocab, config_.padded_vocab);
    double sum = 0;
    for (float x : losses_) sum += static_cast<double>(x);
    return sum / static_cast<double>(N_);
}

Status Bf16DeviceBackend::backward(float loss_scale, bool) {
    TRAINRIG_TRY(supported());
    const int C = config_.channels, NH = config_.heads, L = config_.layers;
    const size_t uC = static_cast<size_t>(C);
    auto zero = [](std::vector<float>& v) { std::fill(v.begin(), v.end(), 0.0f); };
    auto rounded_dres = [&] {
        dres_b_ = dres_;
        round_all(dres_b_);
    };
    cpu::crossentropy_backward(logits_.data(), row_lse_.data(), targets_.data(),
                               loss_scale / static_cast<float>(N_), N_, config_.vocab,
                               config_.padded_vocab);
    round_all(logits_);
    zero(dln_);
    cpu::matmul_backward(dln_.data(), g(Param::kWte), static_cast<float*>(nullptr), logits_.data(),
                         lnf_.data(), w(Param::kWte), N_, C, config_.padded_vocab);
    round_all(dln_);
    zero(dres_);
    const float* last = L > 0 ? layers_.back().res3.data() : encoded_.data();
    cpu::layernorm_backward(dres_.data(), g(Param::kLnfW), g(Param::kLnfB), dln_.data(), last,
                            w(Param::kLnfW), lnf_mean_.data(), lnf_rstd_.data(), N_, C);
    for (int l = L - 1; l >= 0; --l) {
        LayerActs& a = layers_[static_cast<size_t>(l)];
        const float* residual =
            l == 0 ? encoded_.data() : layers_[static_cast<size_t>(l - 1)].res3.data();
        rounded_dres();
        zero(dbuf_);
        cpu::matmul_backward(dbuf_.data(), g(Param::kFcProjW, l), static_cast<float*>(nullptr),
                             dres_b_.data(), a.fch_gelu.data(), w(Param::kFcProjW, l), N_, 4 * C,
                             C);
        round_all(dbuf_);
        bias_backward(g(Param::kFcProjB, l), dres_, C);
        zero(dfch_);
        cpu::gelu_backward(dfch_.data(), a.fch.data(), dbuf_.data(), dfch_.size());
        round_all(dfch_);
        zero(dln_);
        cpu::matmul_backward(dln_.data(), g(Param::kFcW, l), static_cast<float*>(nullptr),
                             dfch_.data(), a.ln2.data(), w(Param::kFcW, l), N_, C, 4 * C);
        round_all(dln_);
        bias_backward(g(Param::kFcB, l), dfch_, 4 * C);
        cpu::layernorm_backward(dres_.data(), g(Param::kLn2W, l), g(Param::kLn2B, l), dln_.data(),
                                a.res2.data(), w(Param::kLn2W, l), a.ln2_mean.data(),
                                a.ln2_rstd.data(), N_, C);
        rounded_dres();
        zero(datty_);
        cpu::matmul_backward(datty_.data(), g(Param::kAttnProjW, l), static_cast<float*>(nullptr),
                             dres_b_.data(), a.atty.data(), w(Param::kAttnProjW, l), N_, C, C);
        round_all(datty_);
        bias_backward(g(Param::kAttnProjB, l), dres_, C);
        attention_backward(dqkv_.data(), datty_.data(), a.qkv.data(), a.atty.data(), a.lse.data(),
                           B_, T_, C, NH);
        zero(dln_);
        cpu::matmul_backward(dln_.data(), g(Param::kQkvW, l), static_cast<float*>(nullptr),
                             dqkv_.data(), a.ln1.data(), w(Param::kQkvW, l), N_, C, 3 * C);
        round_all(dln_);
        bias_backward(g(Param::kQkvB, l), dqkv_, 3 * C);
        cpu::layernorm_backward(dres_.data(), g(Param::kLn1W, l), g(Param::kLn1B, l), dln_.data(),
                                residual, w(Param::kLn1W, l), a.ln1_mean.data(), a.ln1_rstd.data(),
                                N_, C);
        if (fault_ == DeviceFault::kTransposedAttnProjGrad) {
            float* gw = g(Param::kAttnProjW, l);
            for (size_t i = 0; i < uC; ++i)
                for (size_t j = i + 1; j < uC; ++j) std::swap(gw[i * uC + j], gw[j * uC + i]);
        }
    }
    cpu::encoder_backward(g(Param::kWte), g(Param::kWpe), dres_.data(), tokens_.data(), B_, T_, C);
    return ok_status();
}

// adamw.cu's kernel, element by element.
Status Bf16DeviceBackend::update(double lr, int64_t t, double norm) {
    TRAINRIG_TRY(supported());
    AdamWStep a = adamw_step(opt_, lr, t, norm);
    if (fault_ == DeviceFault::kNoAdamBiasCorrection) a.c1 = a.c2 = 1.0f;
    for (const TensorSlot& s : layout_.slots()) {
        const float wd = s.matrix ? a.decay : 0.0f;
        for (size_t i = s.offset; i < s.offset + s.size; ++i) {
            const float gi = grads_[i] * a.clip;
            m_[i] = a.beta1 * m_[i] + (1.0f - a.beta1) * gi;
            v_[i] = a.beta2 * v_[i] + (1.0f - a.beta2) * gi * gi;
            const float mhat = m_[i] / a.c1, vhat = v_[i] / a.c2;
            master_[i] -= a.lr * (mhat / (std::sqrt(vhat) + a.eps) + wd * master_[i]);
        }
    }
    sync_weights();
    return ok_status();
}

}  // namespace

std::unique_ptr<Backend> make_bf16_device_backend(const ModelConfig& config,
                                                  const OptimizerConfig& opt, DeviceFault fault) {
    return std::make_unique<Bf16DeviceBackend>(config, opt, fault);
}

}  // namespace trainrig::train::testing

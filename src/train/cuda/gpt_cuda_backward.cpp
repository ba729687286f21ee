// GptCuda::backward: the CPU reference's backward (src/train/cpu/gpt_cpu.cpp) for either family,
// in the same order, with the residual-stream gradient kept in fp32 (dres) and cast to bf16
// where a GEMM reads it.
#include <fmt/format.h>

#include "cuda/cuda_check.h"
#include "train/cuda/attention.h"
#include "train/cuda/gpt_cuda_impl.h"

namespace trainrig::train::cuda {

void GptCuda::Impl::norm_backward(float* dinp, const bf16* dout, const bf16* inp, Param wp,
                                  Param bp, int l, const float* mean, const float* rstd, int N,
                                  cudaStream_t s) const {
    const int C = config.channels;
    if (llama())
        rmsnorm_backward(dinp, g(wp, l), dout, inp, w(wp, l), rstd, N, C, buf.column_scratch, s);
    else
        layernorm_backward(dinp, g(wp, l), g(bp, l), dout, inp, w(wp, l), mean, rstd, N, C,
                           buf.column_scratch, s);
}

namespace {

// dbias += column sums of dout, for a layer that has a bias (the gradient slot is null when the
// family has none).
template <class In>
void bias_backward_if(float* dbias, const In* dout, int N, int OC, float* scratch, cudaStream_t s) {
    if (dbias != nullptr) bias_backward(dbias, dout, N, OC, scratch, s);
}

}  // namespace

Status GptCuda::backward(float loss_scale, const std::function<Status(int layer)>& layer_done) {
    Impl& model = *impl_;
    if (!model.backward_ready)
        return Status(Errc::kInternal,
                      "backward needs a forward with targets after the last backward");
    // The logits become their gradient below: a second backward would read garbage.
    model.backward_ready = false;
    model.logits_rows = 0;
    const ModelConfig& c = model.config;
    const int B = model.B, T = model.T, N = B * T;
    const int C = c.channels, NH = c.heads, L = c.layers, V = c.vocab, Vp = c.padded_vocab;
    const int KVH = c.kv_head_count(), hd = c.head_dim(), QKV = c.qkv_width(), F = c.ffn_width();
    const bool llama = model.llama();
    const int FC = llama ? 2 * F : F;  // the MLP's first projection: gate | up for Llama
    const size_t uN = static_cast<size_t>(N), uC = static_cast<size_t>(C);
    const size_t uF = static_cast<size_t>(F);
    const DeviceBuffers& b = model.buf;
    const cudaStream_t s = model.stream.get();
    LtGemm& gemm = *model.gemm;
    if (attention_backward_scratch_bytes(B, T, NH) > b.attention_scratch_bytes)
        return Status(Errc::kInternal,
                      fmt::format("attention backward of {} x {} needs more scratch than the "
                                  "{} bytes sized for {} x {}",
                                  B, T, b.attention_scratch_bytes, model.max_B, model.max_T));

    // Classifier (the token embedding when tied, else lm_head): the logits turn into
    // d(loss_scale · mean loss)/dlogits in place.
    crossentropy_backward(b.logits, b.row_lse, b.targets, loss_scale / static_cast<float>(N), N, V,
                          Vp, s);
    const Param classifier = model.layout.classifier();
    TRAINRIG_TRY(gemm.backward_weight(model.g(classifier), b.logits, b.lnf, N, C, Vp, s));
    TRAINRIG_TRY(gemm.backward_input(b.dln, b.logits, model.w(classifier), N, C, Vp, s));
    CUDA_TRY(cudaMemsetAsync(b.dres, 0, uN * uC * sizeof(float), s));
    const bf16* last = L > 0 ? b.layers[static_cast<size_t>(L - 1)].res3 : b.encoded;
    model.norm_backward(b.dres, b.dln, last, Param::kLnfW, Param::kLnfB, 0, b.lnf_mean, b.lnf_rstd,
                        N, s);
    CUDA_TRY(cudaGetLastError());

    // GELU's backward runs in place in dbuf; SwiGLU's reads its F-wide output gradient from dact
    // and writes the 2F-wide gradient of gate | up into dbuf.
    bf16* dact = llama ? b.dact : b.dbuf;
    for (int l = L - 1; l >= 0; --l) {
        const LayerActs& a = b.layers[static_cast<size_t>(l)];
        const bf16* residual = l == 0 ? b.encoded : b.layers[static_cast<size_t>(l - 1)].res3;
        // res3 = res2 + fc_proj(act(fc(norm2(res2)))); dres holds d res3 and becomes d res2 (the
        // identity path leaves it as is, the norm's backward adds the MLP's share).
        cast_to_bf16(b.dres_bf16, b.dres, uN * uC, s);
        TRAINRIG_TRY(
            gemm.backward_weight(model.g(Param::kFcProjW, l), b.dres_bf16, a.fch_gelu, N, F, C, s));
        bias_backward_if(model.g(Param::kFcProjB, l), b.dres, N, C, b.column_scratch, s);
        TRAINRIG_TRY(
            gemm.backward_input(dact, b.dres_bf16, model.w(Param::kFcProjW, l), N, F, C, s));
        if (llama)
            swiglu_backward(b.dbuf, a.fch, dact, uN, F, s);
        else  // elementwise, so reading and writing dbuf in place is safe
            gelu_backward(b.dbuf, a.fch, b.dbuf, uN * uF, s);
        TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kFcW, l), b.dbuf, a.ln2, N, C, FC, s));
        bias_backward_if(model.g(Param::kFcB, l), b.dbuf, N, FC, b.column_scratch, s);
        TRAINRIG_TRY(gemm.backward_input(b.dln, b.dbuf, model.w(Param::kFcW, l), N, C, FC, s));
        model.norm_backward(b.dres, b.dln, a.res2, Param::kLn2W, Param::kLn2B, l, a.ln2_mean,
                            a.ln2_rstd, N, s);

        // res2 = residual + attn_proj(attention(rope(qkv(norm1(residual))))); dres becomes
        // d residual.
        cast_to_bf16(b.dres_bf16, b.dres, uN * uC, s);
        TRAINRIG_TRY(
            gemm.backward_weight(model.g(Param::kAttnProjW, l), b.dres_bf16, a.atty, N, C, C, s));
        bias_backward_if(model.g(Param::kAttnProjB, l), b.dres, N, C, b.column_scratch, s);
        TRAINRIG_TRY(
            gemm.backward_input(b.datty, b.dres_bf16, model.w(Param::kAttnProjW, l), N, C, C, s));
        attention_backward(b.dqkv, b.datty, a.qkv, a.atty, a.lse, b.attention_scratch, B, T, NH,
                           KVH, hd, s);
        // Attention saw the rotated q and k: its dq and dk turn back before the projection's.
        if (llama) rope_backward(b.dqkv, b.rope_cos, b.rope_sin, B, T, NH, KVH, hd, s);
        TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kQkvW, l), b.dqkv, a.ln1, N, C, QKV, s));
        bias_backward_if(model.g(Param::kQkvB, l), b.dqkv, N, QKV, b.column_scratch, s);
        TRAINRIG_TRY(gemm.backward_input(b.dln, b.dqkv, model.w(Param::kQkvW, l), N, C, QKV, s));
        model.norm_backward(b.dres, b.dln, residual, Param::kLn1W, Param::kLn1B, l, a.ln1_mean,
                            a.ln1_rstd, N, s);
        CUDA_TRY(cudaGetLastError());
        if (layer_done) TRAINRIG_TRY(layer_done(l));
    }

    // The embeddings: dres is now d encoded. Llama has no position table (null dwpe).
    encoder_backward(model.g(Param::kWte), model.g(Param::kWpe), b.dres, b.tokens, b.token_order, B,
                     T, C, s);
    CUDA_TRY(cudaGetLastError());
    if (layer_done) TRAINRIG_TRY(layer_done(-1));
    return ok_status();
}

}  // namespace trainrig::train::cuda

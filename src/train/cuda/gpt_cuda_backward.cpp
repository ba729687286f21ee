// GptCuda::backward: the CPU reference's backward (src/train/cpu/gpt_cpu.cpp) in the same order,
// with the residual-stream gradient kept in fp32 (dres) and cast to bf16 where a GEMM reads it.
#include <fmt/format.h>

#include "cuda/cuda_check.h"
#include "train/cuda/attention.h"
#include "train/cuda/gpt_cuda_impl.h"

namespace trainrig::train::cuda {

Status GptCuda::backward(float loss_scale, const std::function<Status(int layer)>& layer_done) {
    Impl& model = *impl_;
    if (!model.backward_ready)
        return Status(Errc::kInternal,
                      "backward needs a forward with targets after the last backward");
    // The logits become their gradient below: a second backward would read garbage.
    model.backward_ready = false;
    model.logits_rows = 0;
    const int B = model.B, T = model.T, N = B * T;
    const int C = model.config.channels, NH = model.config.heads, L = model.config.layers;
    const int V = model.config.vocab, Vp = model.config.padded_vocab;
    const size_t uN = static_cast<size_t>(N), uC = static_cast<size_t>(C);
    const DeviceBuffers& b = model.buf;
    const cudaStream_t s = model.stream.get();
    LtGemm& gemm = *model.gemm;
    if (attention_backward_scratch_bytes(B, T, C, NH) > b.attention_scratch_bytes)
        return Status(Errc::kInternal,
                      fmt::format("attention backward of {} x {} needs more scratch than the "
                                  "{} bytes sized for {} x {}",
                                  B, T, b.attention_scratch_bytes, model.max_B, model.max_T));

    // Classifier: the logits turn into d(loss_scale · mean loss)/dlogits in place.
    crossentropy_backward(b.logits, b.row_lse, b.targets, loss_scale / static_cast<float>(N), N, V,
                          Vp, s);
    TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kWte), b.logits, b.lnf, N, C, Vp, s));
    TRAINRIG_TRY(gemm.backward_input(b.dln, b.logits, model.w(Param::kWte), N, C, Vp, s));
    CUDA_TRY(cudaMemsetAsync(b.dres, 0, uN * uC * sizeof(float), s));
    const bf16* last = L > 0 ? b.layers[static_cast<size_t>(L - 1)].res3 : b.encoded;
    layernorm_backward(b.dres, model.g(Param::kLnfW), model.g(Param::kLnfB), b.dln, last,
                       model.w(Param::kLnfW), b.lnf_mean, b.lnf_rstd, N, C, s);
    CUDA_TRY(cudaGetLastError());

    for (int l = L - 1; l >= 0; --l) {
        const LayerActs& a = b.layers[static_cast<size_t>(l)];
        const bf16* residual = l == 0 ? b.encoded : b.layers[static_cast<size_t>(l - 1)].res3;
        // res3 = res2 + fc_proj(gelu(fc(ln2(res2)))); dres holds d res3 and becomes d res2 (the
        // identity path leaves it as is, LayerNorm's backward adds the MLP's share).
        cast_to_bf16(b.dres_bf16, b.dres, uN * uC, s);
        TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kFcProjW, l), b.dres_bf16, a.fch_gelu, N,
                                          4 * C, C, s));
        bias_backward(model.g(Param::kFcProjB, l), b.dres, N, C, s);
        TRAINRIG_TRY(
            gemm.backward_input(b.dbuf, b.dres_bf16, model.w(Param::kFcProjW, l), N, 4 * C, C, s));
        // Elementwise, so reading and writing dbuf in place is safe.
        gelu_backward(b.dbuf, a.fch, b.dbuf, uN * 4 * uC, s);
        TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kFcW, l), b.dbuf, a.ln2, N, C, 4 * C, s));
        bias_backward(model.g(Param::kFcB, l), b.dbuf, N, 4 * C, s);
        TRAINRIG_TRY(gemm.backward_input(b.dln, b.dbuf, model.w(Param::kFcW, l), N, C, 4 * C, s));
        layernorm_backward(b.dres, model.g(Param::kLn2W, l), model.g(Param::kLn2B, l), b.dln,
                           a.res2, model.w(Param::kLn2W, l), a.ln2_mean, a.ln2_rstd, N, C, s);

        // res2 = residual + attn_proj(attention(qkv(ln1(residual)))); dres becomes d residual.
        cast_to_bf16(b.dres_bf16, b.dres, uN * uC, s);
        TRAINRIG_TRY(
            gemm.backward_weight(model.g(Param::kAttnProjW, l), b.dres_bf16, a.atty, N, C, C, s));
        bias_backward(model.g(Param::kAttnProjB, l), b.dres, N, C, s);
        TRAINRIG_TRY(
            gemm.backward_input(b.datty, b.dres_bf16, model.w(Param::kAttnProjW, l), N, C, C, s));
        attention_backward(b.dqkv, b.datty, a.qkv, a.atty, a.lse, b.attention_scratch, B, T, C, NH,
                           s);
        TRAINRIG_TRY(gemm.backward_weight(model.g(Param::kQkvW, l), b.dqkv, a.ln1, N, C, 3 * C, s));
        bias_backward(model.g(Param::kQkvB, l), b.dqkv, N, 3 * C, s);
        TRAINRIG_TRY(gemm.backward_input(b.dln, b.dqkv, model.w(Param::kQkvW, l), N, C, 3 * C, s));
        layernorm_backward(b.dres, model.g(Param::kLn1W, l), model.g(Param::kLn1B, l), b.dln,
                           residual, model.w(Param::kLn1W, l), a.ln1_mean, a.ln1_rstd, N, C, s);
        CUDA_TRY(cudaGetLastError());
        if (layer_done) TRAINRIG_TRY(layer_done(l));
    }

    // The embeddings: dres is now d encoded.
    encoder_backward(model.g(Param::kWte), model.g(Param::kWpe), b.dres, b.tokens, B, T, C, s);
    CUDA_TRY(cudaGetLastError());
    if (layer_done) TRAINRIG_TRY(layer_done(-1));
    return ok_status();
}

}  // namespace trainrig::train::cuda

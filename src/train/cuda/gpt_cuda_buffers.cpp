#include "train/cuda/gpt_cuda_buffers.h"

#include <algorithm>

#include "cuda/lt_matmul.h"
#include "train/cuda/attention.h"
#include "train/param_layout.h"

namespace trainrig::train::cuda {
namespace {

// 256 bytes: cudaMalloc's own alignment, and what cuBLASLt's fastest kernels assume.
constexpr size_t kAlign = 256;

// Hands out consecutive aligned slices of one allocation, or only counts them.
class Carver {
public:
    explicit Carver(std::byte* base) : base_(base) {}

    template <class T>
    void take(T*& p, size_t count) {
        p = base_ != nullptr && count > 0 ? reinterpret_cast<T*>(base_ + used_) : nullptr;
        used_ += (count * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    }
    void take_bytes(void*& p, size_t bytes) {
        std::byte* b = nullptr;
        take(b, bytes);
        p = b;
    }
    size_t used() const { return used_; }

private:
    std::byte* base_;
    size_t used_ = 0;
};

}  // namespace

DeviceBuffers carve_buffers(const ModelConfig& c, int B, int T, std::byte* base) {
    DeviceBuffers d;
    Carver k(base);
    const size_t P = ParamLayout(c).total();
    k.take(d.master, P);
    k.take(d.params, P);
    k.take(d.grads, P);
    k.take(d.m, P);
    k.take(d.v, P);
    d.state_bytes = k.used();

    // GPT-2: QKV = 3C, F = FC = 4C, LayerNorm keeps a mean. Llama: QKV = C + 2·KVH·hd, the MLP's
    // first projection is gate | up (2F), SwiGLU's output gradient needs its own F-wide buffer,
    // RMSNorm keeps no mean, and RoPE reads its tables.
    const bool llama = c.arch == Arch::kLlama;
    const size_t N = static_cast<size_t>(B) * T, C = c.channels;
    const size_t QKV = static_cast<size_t>(c.qkv_width()), F = static_cast<size_t>(c.ffn_width());
    const size_t FC = llama ? 2 * F : F;
    const size_t stats = llama ? 0 : N;
    k.take(d.tokens, N);
    k.take(d.targets, N);
    k.take(d.token_order, N);
    k.take(d.encoded, N * C);
    d.layers.resize(static_cast<size_t>(c.layers));
    for (LayerActs& a : d.layers) {
        k.take(a.ln1, N * C);
        k.take(a.ln1_mean, stats);
        k.take(a.ln1_rstd, N);
        k.take(a.qkv, N * QKV);
        k.take(a.atty, N * C);
        k.take(a.lse, static_cast<size_t>(B) * c.heads * T);
        k.take(a.res2, N * C);
        k.take(a.ln2, N * C);
        k.take(a.ln2_mean, stats);
        k.take(a.ln2_rstd, N);
        k.take(a.fch, N * FC);
        k.take(a.fch_gelu, N * F);
        k.take(a.res3, N * C);
    }
    k.take(d.lnf, N * C);
    k.take(d.lnf_mean, stats);
    k.take(d.lnf_rstd, N);
    k.take(d.logits, N * static_cast<size_t>(c.padded_vocab));
    k.take(d.losses, N);
    k.take(d.row_lse, N);

    k.take(d.dres, N * C);
    k.take(d.dres_bf16, N * C);
    k.take(d.dbuf, N * FC);
    k.take(d.dact, llama ? N * F : 0);
    k.take(d.dqkv, N * QKV);
    k.take(d.datty, N * C);
    k.take(d.dln, N * C);
    d.rope_positions = llama ? static_cast<int>(std::min<size_t>(N, c.max_seq)) : 0;
    const size_t rope =
        static_cast<size_t>(d.rope_positions) * static_cast<size_t>(c.head_dim() / 2);
    k.take(d.rope_cos, rope);
    k.take(d.rope_sin, rope);
    d.attention_scratch_bytes = attention_backward_scratch_bytes(B, T, c.heads);
    k.take_bytes(d.attention_scratch, d.attention_scratch_bytes);
    k.take(d.column_scratch,
           column_sums_scratch_floats(N, static_cast<int>(std::max({C, QKV, FC}))));
    k.take(d.partials, kSumSquaresBlocks);
    d.gemm_workspace_bytes = trainrig::cuda::kLtWorkspaceBytes;
    k.take_bytes(d.gemm_workspace, d.gemm_workspace_bytes);
    d.total_bytes = k.used();
    return d;
}

}  // namespace trainrig::train::cuda

#include "plan/flops.h"

#include <fmt/format.h>

namespace trainrig::plan {

namespace {
constexpr const char* kPalm = "PaLM (Chowdhery et al. 2022, arXiv:2204.02311) App. B";
constexpr const char* kKorthikantiFlops = "Korthikanti et al. 2022 (arXiv:2205.05198) §5";
constexpr const char* kLoraSource =
    "Hu et al. 2021 (arXiv:2106.09685); frozen weights get no "
    "weight gradient, so backward is 2N instead of 4N";
}  // namespace

int64_t lora_params(const ModelSpec& m, int rank, const LoraTargets& t) {
    const int64_t h = m.hidden, q = int64_t{m.heads} * m.head_dim,
                  kv = int64_t{m.kv_heads} * m.head_dim, f = m.ffn;
    int64_t per_layer = 0;
    if (t.q) per_layer += h + q;
    if (t.k) per_layer += h + kv;
    if (t.v) per_layer += h + kv;
    if (t.o) per_layer += q + h;
    if (t.gate && m.ffn_type == FfnType::kSwiglu) per_layer += h + f;
    if (t.up) per_layer += h + f;
    if (t.down) per_layer += f + h;
    return per_layer * rank * m.layers;
}

double palm_flops_per_token(double matmul_params, int layers, int heads, int head_dim,
                            int64_t seq) {
    return 6.0 * matmul_params + 12.0 * layers * heads * head_dim * static_cast<double>(seq);
}

double megatron_paper_flops_per_iteration(double batch, double seq, double layers, double hidden,
                                          double vocab, bool full_recompute) {
    const double base = batch * seq * layers * hidden * hidden;
    if (full_recompute)
        return 96.0 * base * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
    return 72.0 * base * (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden));
}

double megatron_code_flops_per_token(const ModelSpec& m, int64_t seq) {
    const double h = m.hidden, L = m.layers, s = static_cast<double>(seq);
    const double q_ratio = static_cast<double>(m.heads) * m.head_dim / h;
    const double gated = m.ffn_type == FfnType::kSwiglu ? 1.5 : 1.0;
    const double attention = (1 + static_cast<double>(m.kv_heads) / m.heads + s / h / 2) * q_ratio;
    const double mlp = static_cast<double>(m.ffn) / h * gated;
    const double logit = static_cast<double>(m.vocab) / (2 * L * h);
    return 12.0 * L * h * h * (attention + mlp + logit);
}

double llmc_flops_per_token(double params, int layers, int channels, int64_t seq) {
    return 6.0 * params + 6.0 * layers * channels * static_cast<double>(seq);
}

TokenFlops token_flops(const ModelSpec& m, const ParamCounts& p, const JobSpec& j, Derivation& d) {
    TokenFlops f;
    const double N = static_cast<double>(p.matmul);
    const double L = m.layers, s = static_cast<double>(j.seq);
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double attn_fwd = 4.0 * L * s * q;  // QK^T and AV: 2 GEMMs x 2 FLOP x s x q
    const bool lora = j.mode == Mode::kLora || j.mode == Mode::kQlora;
    const double adapters =
        lora ? static_cast<double>(lora_params(m, j.lora_rank, j.lora_targets)) : 0.0;

    d.add("flops.matmul_params", "parameters a token is multiplied by (N)",
          "non-embedding + vocab x hidden (output layer)",
          fmt::format("{} + {} x {}", num(static_cast<double>(p.non_embedding)), m.vocab, m.hidden),
          N, "params", kPalm);
    f.forward = d.add(
        "flops.forward_per_token", "forward FLOPs per token",
        lora ? "2N + 4·L·s·(H·Q) + 2·N_lora" : "2N + 4·L·s·(H·Q)",
        lora ? fmt::format("2 x {} + 4 x {} x {} x {} + 2 x {}", num(N), L, s, q, num(adapters))
             : fmt::format("2 x {} + 4 x {} x {} x {}", num(N), L, s, q),
        2 * N + attn_fwd + 2 * adapters, "FLOP", kPalm);
    if (lora) {
        f.backward =
            d.add("flops.backward_per_token", "backward FLOPs per token (LoRA)",
                  "2N + 8·L·s·(H·Q) + 4·N_lora",
                  fmt::format("2 x {} + 8 x {} x {} x {} + 4 x {}", num(N), L, s, q, num(adapters)),
                  2 * N + 2 * attn_fwd + 4 * adapters, "FLOP", kLoraSource);
    } else {
        f.backward =
            d.add("flops.backward_per_token", "backward FLOPs per token", "4N + 8·L·s·(H·Q)",
                  fmt::format("4 x {} + 8 x {} x {} x {}", num(N), L, s, q), 4 * N + 2 * attn_fwd,
                  "FLOP", kPalm);
    }
    d.add("flops.per_token", "model FLOPs per token (PaLM: 6N + 12·L·H·Q·T)", "forward + backward",
          fmt::format("{} + {}", num(f.forward), num(f.backward)), f.model(), "FLOP", kPalm);
    if (j.recompute == Recompute::kFull) {
        // The transformer layers run their forward twice; the output layer does not.
        const double layers_fwd = 2.0 * L * static_cast<double>(p.per_layer) + attn_fwd;
        f.recompute = d.add("flops.recompute_per_token", "recomputed forward FLOPs per token",
                            "2·L·N_layer + 4·L·s·(H·Q)",
                            fmt::format("2 x {} x {} + 4 x {} x {} x {}", L,
                                        num(static_cast<double>(p.per_layer)), L, s, q),
                            layers_fwd, "FLOP", kKorthikantiFlops);
    } else if (j.recompute == Recompute::kSelective && !j.flash_attention) {
        f.recompute =
            d.add("flops.recompute_per_token",
                  "recomputed attention-core FLOPs per token (selective)", "4·L·s·(H·Q)",
                  fmt::format("4 x {} x {} x {}", L, s, q), attn_fwd, "FLOP", kKorthikantiFlops);
    }
    f.megatron =
        d.add("flops.megatron_per_token",
              lora ? "Megatron-LM's count for comparison (causal attention halved; minus the "
                     "frozen weights' gradients, plus adapters)"
                   : "Megatron-LM's count for comparison (causal attention halved)",
              std::string("12·L·h²·[(1 + g/a + s/2h)·(q/h) + (f/h)·(3/2 if SwiGLU) + "
                          "V/(2Lh)]") +
                  (lora ? " - 2N + 6·N_lora" : ""),
              fmt::format("12 x {} x {}² x [...] with g={}, a={}, s={}, f={}, V={}", L, m.hidden,
                          m.kv_heads, m.heads, j.seq, m.ffn, m.vocab),
              megatron_code_flops_per_token(m, j.seq) - (lora ? 2 * N - 6 * adapters : 0.0), "FLOP",
              "Megatron-LM megatron/training/training.py "
              "num_floating_point_operations");
    return f;
}

}  // namespace trainrig::plan

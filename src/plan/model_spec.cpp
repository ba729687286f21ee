#include "plan/model_spec.h"

#include <fmt/format.h>

namespace trainrig::plan {

ParamCounts count_params(const ModelSpec& m) {
    ParamCounts c;
    const int64_t h = m.hidden;
    const int64_t q_dim = int64_t{m.heads} * m.head_dim;
    const int64_t kv_dim = int64_t{m.kv_heads} * m.head_dim;
    c.attention = h * q_dim + 2 * h * kv_dim + q_dim * h;
    if (m.qkv_bias) c.attention += q_dim + 2 * kv_dim;
    if (m.out_bias) c.attention += h;
    const int64_t matrices = m.ffn_type == FfnType::kSwiglu ? 3 : 2;
    c.mlp = matrices * h * m.ffn;
    if (m.mlp_bias) c.mlp += (matrices - 1) * m.ffn + h;
    const int64_t norm = m.norm == NormType::kLayerNorm ? 2 * h : h;
    c.norms = 2 * norm;
    c.per_layer = c.attention + c.mlp + c.norms;
    c.token_embedding = m.vocab * h;
    c.position_embedding = m.positions == PositionType::kLearned ? m.max_positions * h : 0;
    c.output_layer = m.tied_embeddings ? 0 : m.vocab * h;
    c.final_norm = norm;
    c.non_embedding = int64_t{m.layers} * c.per_layer + c.final_norm;
    c.total = c.non_embedding + c.token_embedding + c.position_embedding + c.output_layer;
    c.matmul = c.non_embedding + m.vocab * h;
    return c;
}

Status validate_model(const ModelSpec& m, std::string_view where) {
    auto bad = [&](std::string_view field, int64_t v, std::string_view why) {
        return Status{Errc::kInvalidInput, fmt::format("{}: {} is {}; {}", where, field, v, why)};
    };
    if (m.layers <= 0) return bad("layers", m.layers, "it must be positive");
    if (m.hidden <= 0) return bad("hidden size", m.hidden, "it must be positive");
    if (m.heads <= 0) return bad("attention heads", m.heads, "it must be positive");
    if (m.kv_heads <= 0) return bad("key/value heads", m.kv_heads, "it must be positive");
    if (m.head_dim <= 0) return bad("head dimension", m.head_dim, "it must be positive");
    if (m.ffn <= 0) return bad("FFN size", m.ffn, "it must be positive");
    if (m.vocab <= 0) return bad("vocabulary size", m.vocab, "it must be positive");
    if (m.max_positions < 0) return bad("max positions", m.max_positions, "it cannot be negative");
    // Far beyond any model trained; keeps every count inside 64-bit integers.
    const auto too_big = [&](std::string_view field, int64_t v, int64_t limit) {
        return bad(field, v, fmt::format("more than {} is not a real model", limit));
    };
    if (m.layers > 100'000) return too_big("layers", m.layers, 100'000);
    if (m.hidden > 1'000'000) return too_big("hidden size", m.hidden, 1'000'000);
    if (m.heads > 100'000) return too_big("attention heads", m.heads, 100'000);
    if (m.head_dim > 100'000) return too_big("head dimension", m.head_dim, 100'000);
    if (m.ffn > 10'000'000) return too_big("FFN size", m.ffn, 10'000'000);
    if (m.vocab > 100'000'000) return too_big("vocabulary size", m.vocab, 100'000'000);
    if (m.max_positions > 1'000'000'000)
        return too_big("max positions", m.max_positions, 1'000'000'000);
    if (m.heads % m.kv_heads != 0)
        return bad("key/value heads", m.kv_heads,
                   fmt::format("it must divide the {} attention heads", m.heads));
    return ok_status();
}

const char* ffn_type_name(FfnType t) { return t == FfnType::kSwiglu ? "swiglu" : "gelu"; }

}  // namespace trainrig::plan

// A decoder-only transformer as the planner sees it: the architecture fields that decide
// parameter count, FLOPs and activation memory, and the exact parameter count they imply.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace trainrig::plan {

enum class FfnType { kGelu, kSwiglu };         // 2 matrices (up, down) or 3 (gate, up, down)
enum class NormType { kLayerNorm, kRmsNorm };  // weight + bias, or weight only
enum class PositionType { kLearned, kRope };   // a max_positions x hidden table, or none

// Llama 3.1's rescaling of RoPE's frequencies (transformers' rope_type "llama3"): wavelengths
// longer than original/low_freq_factor are divided by `factor`, shorter than
// original/high_freq_factor kept, and those between blended. factor 0: no rescaling.
struct RopeScaling {
    double factor = 0, low_freq_factor = 1, high_freq_factor = 4;
    int64_t original_max_positions = 8192;
    bool operator==(const RopeScaling&) const = default;
};

struct ModelSpec {
    std::string id;      // catalog id ("llama2-7b") or the config file's name
    std::string name;    // "Llama-2-7B"
    std::string source;  // where the architecture comes from (paper, config.json)
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;  // grouped-query attention when < heads
    int head_dim = 0;  // hidden / heads unless the config says otherwise
    int64_t ffn = 0;   // intermediate size
    FfnType ffn_type = FfnType::kGelu;
    int64_t vocab = 0;
    bool tied_embeddings = false;
    int64_t max_positions = 0;
    PositionType positions = PositionType::kRope;
    NormType norm = NormType::kRmsNorm;
    bool qkv_bias = false;  // Qwen2: q/k/v projections carry a bias; o_proj does not
    bool out_bias = false;  // attention output projection bias (GPT-2)
    bool mlp_bias = false;  // MLP biases (GPT-2)
    bool dropout = false;   // trained with dropout: its masks are stored for backward
    // What the forward pass computes but the counts do not see (train builds from these):
    // RoPE's base, Llama 3.1's frequency rescaling (rope_scaling "llama3"; factor 0 = none),
    // and the norm's epsilon.
    double rope_theta = 10000;
    RopeScaling rope_scaling;
    double norm_eps = 1e-5;
    int64_t published_params = 0;  // the exact count its authors publish, 0 when none
};

// Parameter counts (Kaplan et al. 2020, arXiv:2001.08361 §2.1: N excludes embeddings).
struct ParamCounts {
    int64_t total = 0;
    int64_t per_layer = 0;        // one transformer block, norms and biases included
    int64_t attention = 0;        // of one block: q, k, v, o (+ biases)
    int64_t mlp = 0;              // of one block
    int64_t norms = 0;            // of one block
    int64_t token_embedding = 0;  // vocab x hidden
    int64_t position_embedding = 0;
    int64_t output_layer = 0;  // the untied LM head; 0 when tied to the token embedding
    int64_t final_norm = 0;
    // Everything but the token and position tables and an untied LM head.
    int64_t non_embedding = 0;
    // Parameters a token's forward pass multiplies by: non-embedding plus the output
    // projection (vocab x hidden, tied or not). The FLOPs formulas use this N.
    int64_t matmul = 0;
};

ParamCounts count_params(const ModelSpec& m);

// One sentence naming the first field that makes no sense (zero, negative, heads that do not
// divide hidden without an explicit head_dim, kv_heads that do not divide heads).
Status validate_model(const ModelSpec& m, std::string_view where);

const char* ffn_type_name(FfnType t);

}  // namespace trainrig::plan

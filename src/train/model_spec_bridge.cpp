#include "train/model_spec_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/text.h"
#include "core/user_file.h"
#include "plan/hf_config.h"
#include "plan/model_catalog.h"

namespace trainrig::train {

plan::ModelSpec model_spec_of(const ModelConfig& c) {
    plan::ModelSpec m;
    m.id = c.name;
    m.name = c.name;
    m.source = "trainrig train's model shape";
    m.layers = c.layers;
    m.hidden = c.channels;
    m.heads = c.heads;
    m.kv_heads = c.kv_head_count();
    m.head_dim = c.head_dim();
    m.ffn = c.ffn_width();
    m.vocab = c.vocab;
    m.max_positions = c.max_seq;
    m.tied_embeddings = c.tied_output();
    if (c.arch == Arch::kGpt2) {
        m.ffn_type = plan::FfnType::kGelu;
        m.positions = plan::PositionType::kLearned;
        m.norm = plan::NormType::kLayerNorm;
        m.qkv_bias = m.out_bias = m.mlp_bias = true;
    } else {
        m.ffn_type = plan::FfnType::kSwiglu;
        m.positions = plan::PositionType::kRope;
        m.norm = plan::NormType::kRmsNorm;
        m.qkv_bias = c.qkv_bias;
        m.rope_theta = c.rope_theta;
        m.rope_scaling = c.rope_scaling;
        m.norm_eps = c.norm_eps;
    }
    return m;
}

Result<ModelConfig> config_from_spec(const plan::ModelSpec& m) {
    auto cannot = [&](const std::string& why) {
        return Status(Errc::kUnsupported, fmt::format("train cannot build {}: {}", m.id, why));
    };
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();
    if (m.vocab > kIntMax - 128 || m.ffn > kIntMax || m.max_positions > kIntMax)
        return cannot("a size is beyond 2^31");
    if (m.heads <= 0 || m.hidden % m.heads != 0 || m.head_dim != m.hidden / m.heads)
        return cannot(
            fmt::format("head_dim {} is not hidden {} / heads {}", m.head_dim, m.hidden, m.heads));
    ModelConfig c;
    c.name = m.id;
    c.layers = m.layers;
    c.heads = m.heads;
    c.channels = m.hidden;
    c.vocab = static_cast<int>(m.vocab);
    c.padded_vocab = pad_vocab(c.vocab);
    c.max_seq = static_cast<int>(m.max_positions > 0 ? m.max_positions : 2048);
    const bool gpt2_like = m.norm == plan::NormType::kLayerNorm &&
                           m.positions == plan::PositionType::kLearned &&
                           m.ffn_type == plan::FfnType::kGelu;
    if (gpt2_like) {
        if (!m.qkv_bias || !m.out_bias || !m.mlp_bias || !m.tied_embeddings ||
            m.ffn != 4LL * m.hidden || m.kv_heads != m.heads)
            return cannot(
                "a GPT-2 block has biases everywhere, tied embeddings, full attention "
                "and an MLP of 4 × hidden");
        return c;
    }
    if (m.norm != plan::NormType::kRmsNorm || m.positions != plan::PositionType::kRope ||
        m.ffn_type != plan::FfnType::kSwiglu)
        return cannot(
            "train builds GPT-2 blocks (LayerNorm, learned positions, GELU) or Llama "
            "blocks (RMSNorm, rotary positions, SwiGLU), not a mix");
    if (m.out_bias || m.mlp_bias) return cannot("a Llama block has no bias on o_proj or the MLP");
    c.arch = Arch::kLlama;
    c.kv_heads = m.kv_heads;
    c.ffn = static_cast<int>(m.ffn);
    c.rope_theta = m.rope_theta;
    c.rope_scaling = m.rope_scaling;
    c.norm_eps = m.norm_eps;
    c.tied = m.tied_embeddings;
    c.qkv_bias = m.qkv_bias;
    return c;
}

Result<ModelConfig> find_train_model(std::string_view name) {
    auto preset = preset_config(name);
    if (preset.ok() || preset.status().code() != Errc::kNotFound) return preset;
    if (auto spec = plan::find_model(name)) return config_from_spec(*spec);
    // The presets and plan's catalog share the GPT-2 names: each name once.
    std::vector<std::string> known = preset_names();
    for (const plan::ModelSpec& m : plan::model_catalog())
        if (std::find(known.begin(), known.end(), m.id) == known.end()) known.push_back(m.id);
    return Status(Errc::kInvalidInput, fmt::format("unknown model '{}'", name),
                  fmt::format("use one of {}; --model-config config.json; or "
                              "--layers/--heads/--dim",
                              join(known, ", ")));
}

Result<ModelConfig> config_from_hf_file(const std::string& path) {
    auto text = read_user_file(path, "--model-config", 1 << 20);
    if (!text.ok()) return text.status();
    auto spec = plan::model_from_hf_config(*text, path);
    if (!spec.ok()) return spec.status();
    return config_from_spec(*spec);
}

}  // namespace trainrig::train

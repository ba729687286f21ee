#include "plan/model_catalog.h"

namespace trainrig::plan {

namespace {

// GPT-2 (Radford et al. 2019; Hugging Face openai-community/gpt2* config.json): learned
// positions, LayerNorm, biases on every linear layer, GELU MLP of 4 x hidden, tied embeddings,
// dropout 0.1. Published counts are the Hugging Face safetensors totals.
ModelSpec gpt2(std::string id, std::string name, int layers, int hidden, int heads,
               int64_t published) {
    ModelSpec m;
    m.id = std::move(id);
    m.name = std::move(name);
    m.source = "Radford et al. 2019; Hugging Face openai-community/" +
               (m.id == "gpt2" ? std::string("gpt2") : m.id) + " config.json";
    m.layers = layers;
    m.hidden = hidden;
    m.heads = m.kv_heads = heads;
    m.head_dim = hidden / heads;
    m.ffn = 4LL * hidden;
    m.ffn_type = FfnType::kGelu;
    m.vocab = 50257;
    m.tied_embeddings = true;
    m.max_positions = 1024;
    m.positions = PositionType::kLearned;
    m.norm = NormType::kLayerNorm;
    m.qkv_bias = m.out_bias = m.mlp_bias = true;
    m.dropout = true;
    m.published_params = published;
    return m;
}

// The Llama family and its descendants: RoPE, RMSNorm, SwiGLU, no biases, untied, no dropout.
ModelSpec llama(std::string id, std::string name, std::string source, int layers, int hidden,
                int heads, int kv_heads, int64_t ffn, int64_t vocab, int64_t max_positions,
                int64_t published) {
    ModelSpec m;
    m.id = std::move(id);
    m.name = std::move(name);
    m.source = std::move(source);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = hidden / heads;
    m.ffn = ffn;
    m.ffn_type = FfnType::kSwiglu;
    m.vocab = vocab;
    m.max_positions = max_positions;
    m.published_params = published;
    return m;
}

// Llama 3's config.json: rope_theta 500000, rms_norm_eps 1e-5; 3.1 adds rope_scaling "llama3"
// (factor 8, low 1, high 4, original context 8192).
ModelSpec llama3(ModelSpec m, bool scaled) {
    m.rope_theta = 500000;
    if (scaled) m.rope_scaling = {8, 1, 4, 8192};
    return m;
}

ModelSpec qwen2(std::string id, std::string name, int layers, int hidden, int heads, int kv_heads,
                int64_t ffn, int64_t published) {
    auto m = llama(std::move(id), std::move(name),
                   "Qwen2.5 technical report (arXiv:2412.15115); Hugging Face Qwen config.json",
                   layers, hidden, heads, kv_heads, ffn, 152064, 131072, published);
    m.qkv_bias = true;         // Qwen2Attention: q/k/v_proj bias=True, o_proj bias=False
    m.rope_theta = 1'000'000;  // Qwen2.5 config.json: rope_theta 1000000.0, rms_norm_eps 1e-6
    m.norm_eps = 1e-6;
    return m;
}

std::vector<ModelSpec> build_catalog() {
    const std::string l2 =
        "Touvron et al. 2023 (arXiv:2307.09288); Hugging Face meta-llama config.json";
    const std::string l3 =
        "Llama 3 herd paper (arXiv:2407.21783); Hugging Face meta-llama config.json";
    return {
        gpt2("gpt2", "GPT-2 124M", 12, 768, 12, 124'439'808),
        gpt2("gpt2-medium", "GPT-2 350M", 24, 1024, 16, 354'823'168),
        gpt2("gpt2-large", "GPT-2 774M", 36, 1280, 20, 774'030'080),
        gpt2("gpt2-xl", "GPT-2 1.5B", 48, 1600, 25, 1'557'611'200),
        llama("llama2-7b", "Llama-2-7B", l2, 32, 4096, 32, 32, 11008, 32000, 4096, 6'738'415'616),
        llama("llama2-13b", "Llama-2-13B", l2, 40, 5120, 40, 40, 13824, 32000, 4096,
              13'015'864'320),
        llama("llama2-70b", "Llama-2-70B", l2, 80, 8192, 64, 8, 28672, 32000, 4096, 68'976'648'192),
        llama3(llama("llama3-8b", "Llama-3-8B", l3, 32, 4096, 32, 8, 14336, 128256, 8192,
                     8'030'261'248),
               false),
        llama3(llama("llama3-70b", "Llama-3-70B", l3, 80, 8192, 64, 8, 28672, 128256, 8192,
                     70'553'706'496),
               false),
        llama3(llama("llama3.1-8b", "Llama-3.1-8B", l3, 32, 4096, 32, 8, 14336, 128256, 131072,
                     8'030'261'248),
               true),
        llama3(llama("llama3.1-70b", "Llama-3.1-70B", l3, 80, 8192, 64, 8, 28672, 128256, 131072,
                     70'553'706'496),
               true),
        llama("mistral-7b", "Mistral-7B-v0.1",
              "Jiang et al. 2023 (arXiv:2310.06825); Hugging Face mistralai config.json", 32, 4096,
              32, 8, 14336, 32000, 32768, 7'241'732'096),
        qwen2("qwen2.5-7b", "Qwen2.5-7B", 28, 3584, 28, 4, 18944, 7'615'616'512),
        qwen2("qwen2.5-14b", "Qwen2.5-14B", 48, 5120, 40, 8, 13824, 14'770'033'664),
        qwen2("qwen2.5-72b", "Qwen2.5-72B", 80, 8192, 64, 8, 29568, 72'706'203'648),
    };
}

}  // namespace

const std::vector<ModelSpec>& model_catalog() {
    static const std::vector<ModelSpec> catalog = build_catalog();
    return catalog;
}

std::optional<ModelSpec> find_model(std::string_view id) {
    for (const auto& m : model_catalog())
        if (m.id == id) return m;
    return std::nullopt;
}

std::string model_ids() {
    std::string out;
    for (const auto& m : model_catalog()) out += (out.empty() ? "" : ", ") + m.id;
    return out;
}

}  // namespace trainrig::plan

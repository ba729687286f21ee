#include "plan/hf_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

namespace trainrig::plan {

namespace {

using nlohmann::json;

class ConfigReader {
public:
    ConfigReader(const json& doc, std::string_view where) : doc_(doc), where_(where) {}

    // A positive integer under the first of `keys` present (and not null); `fallback` when none.
    std::optional<int64_t> integer(std::initializer_list<const char*> keys,
                                   std::optional<int64_t> fallback = std::nullopt) {
        for (const char* key : keys) {
            auto it = doc_.find(key);
            if (it == doc_.end() || it->is_null()) continue;
            if (!it->is_number_integer() || it->get<int64_t>() <= 0 ||
                it->get<int64_t>() > 1'000'000'000) {
                fail(
                    fmt::format("\"{}\" is {}, not a positive integer up to 1e9", key, it->dump()));
                return std::nullopt;
            }
            return it->get<int64_t>();
        }
        if (!fallback) fail(fmt::format("\"{}\" is missing", *keys.begin()));
        return fallback;
    }
    bool boolean(const char* key, bool fallback) {
        auto it = doc_.find(key);
        if (it == doc_.end() || it->is_null()) return fallback;
        if (!it->is_boolean()) {
            fail(fmt::format("\"{}\" is {}, not true or false", key, it->dump()));
            return fallback;
        }
        return it->get<bool>();
    }
    double number(const char* key, double fallback) {
        auto it = doc_.find(key);
        if (it == doc_.end() || it->is_null()) return fallback;
        if (!it->is_number()) {
            fail(fmt::format("\"{}\" is {}, not a number", key, it->dump()));
            return fallback;
        }
        return it->get<double>();
    }
    std::string text(const char* key, std::string fallback) {
        auto it = doc_.find(key);
        if (it == doc_.end() || it->is_null()) return fallback;
        if (!it->is_string()) {
            fail(fmt::format("\"{}\" is {}, not a string", key, it->dump()));
            return fallback;
        }
        return it->get<std::string>();
    }
    // A JSON object under `key`, null when absent or null; anything else fails.
    const json* object(const char* key) {
        auto it = doc_.find(key);
        if (it == doc_.end() || it->is_null()) return nullptr;
        if (!it->is_object()) {
            fail(fmt::format("\"{}\" is {}, not an object", key, it->dump()));
            return nullptr;
        }
        return &*it;
    }
    void fail(std::string what) {
        if (status_.ok()) status_ = {Errc::kInvalidInput, fmt::format("{}: {}", where_, what)};
    }
    const Status& status() const { return status_; }

private:
    const json& doc_;
    std::string_view where_;
    Status status_;
};

int to_int(std::optional<int64_t> v) { return v ? static_cast<int>(*v) : 0; }

ModelSpec read_gpt2(ConfigReader& r) {
    // GPT2Config: n_inner None means 4 x n_embd; every linear layer and LayerNorm has a bias.
    ModelSpec m;
    m.layers = to_int(r.integer({"n_layer", "num_hidden_layers"}));
    m.hidden = to_int(r.integer({"n_embd", "hidden_size"}));
    m.heads = m.kv_heads = to_int(r.integer({"n_head", "num_attention_heads"}));
    m.ffn = r.integer({"n_inner"}, int64_t{4} * m.hidden).value_or(0);
    m.vocab = r.integer({"vocab_size"}).value_or(0);
    m.max_positions = r.integer({"n_positions", "max_position_embeddings"}).value_or(0);
    m.tied_embeddings = r.boolean("tie_word_embeddings", true);
    m.ffn_type = FfnType::kGelu;
    m.positions = PositionType::kLearned;
    m.norm = NormType::kLayerNorm;
    m.qkv_bias = m.out_bias = m.mlp_bias = true;
    m.dropout = r.number("resid_pdrop", 0.1) > 0 || r.number("attn_pdrop", 0.1) > 0;
    return m;
}

// transformers' rope_scaling: "llama3" (Llama 3.1 and later) rescales RoPE's low frequencies
// and is part of the model; any other type would be computed differently, so it is refused
// rather than ignored.
void read_rope_scaling(ConfigReader& r, ModelSpec& m) {
    const json* scaling = r.object("rope_scaling");
    if (scaling == nullptr) return;
    ConfigReader s(*scaling, "rope_scaling");
    const std::string type = s.text("rope_type", s.text("type", ""));
    if (type == "default") return;
    if (type != "llama3") {
        r.fail(fmt::format("rope_scaling type \"{}\" is not supported (only \"llama3\")", type));
        return;
    }
    m.rope_scaling.factor = s.number("factor", 8.0);
    m.rope_scaling.low_freq_factor = s.number("low_freq_factor", 1.0);
    m.rope_scaling.high_freq_factor = s.number("high_freq_factor", 4.0);
    m.rope_scaling.original_max_positions =
        s.integer({"original_max_position_embeddings"}, 8192).value_or(8192);
    if (!s.status().ok()) r.fail(s.status().message());
    if (!(m.rope_scaling.factor >= 1) ||
        !(m.rope_scaling.high_freq_factor > m.rope_scaling.low_freq_factor))
        r.fail("rope_scaling needs factor >= 1 and high_freq_factor > low_freq_factor");
}

ModelSpec read_llama_like(ConfigReader& r, std::string_view type) {
    ModelSpec m;
    m.layers = to_int(r.integer({"num_hidden_layers"}));
    m.hidden = to_int(r.integer({"hidden_size"}));
    m.heads = to_int(r.integer({"num_attention_heads"}));
    m.kv_heads = to_int(r.integer({"num_key_value_heads"}, m.heads));
    m.ffn = r.integer({"intermediate_size"}).value_or(0);
    m.vocab = r.integer({"vocab_size"}).value_or(0);
    m.max_positions = r.integer({"max_position_embeddings"}, 0).value_or(0);
    m.tied_embeddings = r.boolean("tie_word_embeddings", false);
    if (auto head_dim = r.integer({"head_dim"}, 0); head_dim && *head_dim > 0)
        m.head_dim = static_cast<int>(*head_dim);
    const std::string act = r.text("hidden_act", "silu");
    if (act != "silu" && act != "swish")
        r.fail(fmt::format("hidden_act \"{}\" is not the SwiGLU (silu) MLP a {} model has", act,
                           type));
    m.ffn_type = FfnType::kSwiglu;
    m.positions = PositionType::kRope;
    m.norm = NormType::kRmsNorm;
    if (type == "qwen2") {
        m.qkv_bias = true;  // transformers Qwen2Attention: q/k/v bias=True, o_proj bias=False
    } else if (type == "llama") {
        m.qkv_bias = m.out_bias = r.boolean("attention_bias", false);
        m.mlp_bias = r.boolean("mlp_bias", false);
    }
    m.dropout = r.number("attention_dropout", 0.0) > 0;
    m.rope_theta = r.number("rope_theta", 10000.0);
    m.norm_eps = r.number("rms_norm_eps", 1e-6);
    read_rope_scaling(r, m);
    return m;
}

}  // namespace

Result<ModelSpec> model_from_hf_config(std::string_view text, std::string_view where) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        return Status{Errc::kInvalidInput, fmt::format("{}: not valid JSON", where),
                      "give the config.json that comes with the checkpoint"};
    if (!doc.is_object())
        return Status{Errc::kInvalidInput, fmt::format("{}: not a JSON object", where)};
    ConfigReader r(doc, where);
    const std::string type = r.text("model_type", "");
    ModelSpec m;
    if (type == "gpt2") {
        m = read_gpt2(r);
    } else if (type == "llama" || type == "mistral" || type == "qwen2") {
        m = read_llama_like(r, type);
    } else if (type.empty()) {
        r.fail("\"model_type\" is missing");
    } else {
        const bool moe = doc.contains("num_local_experts") || doc.contains("num_experts");
        r.fail(
            fmt::format("model_type \"{}\" is not supported{} (supported: gpt2, llama, "
                        "mistral, qwen2)",
                        type, moe ? "; mixture-of-experts models are not planned yet" : ""));
    }
    if (!r.status().ok()) return r.status();
    if (m.head_dim == 0 && m.heads > 0) {
        if (m.hidden % m.heads != 0)
            return Status{Errc::kInvalidInput,
                          fmt::format("{}: {} heads do not divide hidden size {} and no "
                                      "head_dim is given",
                                      where, m.heads, m.hidden)};
        m.head_dim = m.hidden / m.heads;
    }
    m.id = std::string(where);
    m.name = r.text("_name_or_path", "");
    if (m.name.empty()) m.name = fmt::format("{} model from {}", type, where);
    m.source = std::string(where);
    TRAINRIG_TRY(validate_model(m, where));
    return m;
}

}  // namespace trainrig::plan

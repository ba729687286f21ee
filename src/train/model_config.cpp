#include "train/model_config.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/fnv1a.h"

namespace trainrig::train {
namespace {

struct Preset {
    const char* name;
    int layers, heads, channels;
};

// GPT-2's released sizes (Radford et al. 2019, Table 2; the Hugging Face configs). "tiny" is
// for tests and quick CPU runs.
constexpr std::array kPresets = {
    Preset{"tiny", 2, 4, 64},
    Preset{"gpt2", 12, 12, 768},
    Preset{"gpt2-medium", 24, 16, 1024},
    Preset{"gpt2-large", 36, 20, 1280},
    Preset{"gpt2-xl", 48, 25, 1600},
};
constexpr int kGpt2Vocab = 50257;
constexpr int kGpt2Positions = 1024;

// llama-tiny: every llama part at a size a CPU trains in seconds. Two key/value heads for four
// query heads exercise grouped-query attention; the MLP width is Llama's 8/3·C rounded up to a
// multiple of 16 (64 → 176); GPT-2's vocabulary so the same token data serves both families.
ModelConfig llama_tiny() {
    ModelConfig c;
    c.name = "llama-tiny";
    c.arch = Arch::kLlama;
    c.layers = 2;
    c.heads = 4;
    c.kv_heads = 2;
    c.channels = 64;
    c.ffn = 176;
    c.max_seq = kGpt2Positions;
    c.vocab = kGpt2Vocab;
    c.padded_vocab = pad_vocab(kGpt2Vocab);
    c.tied = false;
    return c;
}

}  // namespace

const char* arch_name(Arch a) { return a == Arch::kLlama ? "llama" : "gpt2"; }

Result<ModelConfig> preset_config(std::string_view name) {
    if (name == "llama-tiny") return llama_tiny();
    for (const Preset& p : kPresets) {
        if (name != p.name) continue;
        ModelConfig c;
        c.name = p.name;
        c.layers = p.layers;
        c.heads = p.heads;
        c.channels = p.channels;
        c.max_seq = kGpt2Positions;
        c.vocab = kGpt2Vocab;
        c.padded_vocab = pad_vocab(kGpt2Vocab);
        return c;
    }
    return Status(Errc::kNotFound, fmt::format("unknown model '{}'", name));
}

std::vector<std::string> preset_names() {
    std::vector<std::string> out;
    for (const Preset& p : kPresets) out.emplace_back(p.name);
    out.emplace_back("llama-tiny");
    return out;
}

Status validate(const ModelConfig& c) {
    auto bad = [](std::string what) { return Status(Errc::kInvalidInput, std::move(what)); };
    if (c.layers < 1 || c.layers > 1024)
        return bad(fmt::format("layers must be 1..1024, not {}", c.layers));
    if (c.heads < 1) return bad(fmt::format("heads must be at least 1, not {}", c.heads));
    if (c.channels < 1 || c.channels > 65536)
        return bad(fmt::format("dim must be 1..65536, not {}", c.channels));
    if (c.channels % c.heads != 0)
        return bad(fmt::format("dim {} is not a multiple of heads {}", c.channels, c.heads));
    if (c.max_seq < 1)
        return bad(fmt::format("the position table must have at least 1 row, not {}", c.max_seq));
    if (c.vocab < 2)
        return bad(fmt::format("vocabulary must have at least 2 tokens, not {}", c.vocab));
    if (c.padded_vocab < c.vocab || c.padded_vocab % kVocabAlignment != 0)
        return bad(fmt::format("padded vocabulary {} must be a multiple of {} and at least {}",
                               c.padded_vocab, kVocabAlignment, c.vocab));
    if (c.arch != Arch::kLlama) return ok_status();
    if (c.kv_heads < 1 || c.heads % c.kv_heads != 0)
        return bad(fmt::format("key/value heads {} must divide heads {}", c.kv_heads, c.heads));
    if (c.head_dim() % 2 != 0)
        return bad(fmt::format("rotary embeddings need an even head size, not {}", c.head_dim()));
    if (c.ffn < 1 || c.ffn > 1'000'000)
        return bad(fmt::format("the MLP width must be 1..1000000, not {}", c.ffn));
    if (!(c.rope_theta > 1) || !std::isfinite(c.rope_theta))
        return bad(fmt::format("rope_theta must be a number above 1, not {}", c.rope_theta));
    if (!(c.norm_eps > 0) || c.norm_eps > 1)
        return bad(fmt::format("the RMSNorm epsilon must be in (0, 1], not {}", c.norm_eps));
    return ok_status();
}

std::string config_hash(const ModelConfig& c) {
    // Over the canonical shape string: stable across builds and machines.
    std::string canon = fmt::format("gpt2;L={};NH={};C={};maxT={};V={};Vp={}", c.layers, c.heads,
                                    c.channels, c.max_seq, c.vocab, c.padded_vocab);
    if (c.arch == Arch::kLlama)
        canon = fmt::format(
            "llama;{};KVH={};F={};theta={:.17g};eps={:.17g};tied={};qkvb={};scale={:.17g},{:.17g},"
            "{:.17g},{}",
            canon.substr(5), c.kv_heads, c.ffn, c.rope_theta, c.norm_eps, c.tied ? 1 : 0,
            c.qkv_bias ? 1 : 0, c.rope_scaling.factor, c.rope_scaling.low_freq_factor,
            c.rope_scaling.high_freq_factor, c.rope_scaling.original_max_positions);
    return fmt::format("{:016x}", fnv1a64(canon));
}

std::string describe(const ModelConfig& c) {
    if (c.arch == Arch::kLlama)
        return fmt::format(
            "llama: {} layers, {} heads ({} key/value), {} channels, MLP {}, {} positions, "
            "vocabulary {} (padded {}), {} output layer",
            c.layers, c.heads, c.kv_heads, c.channels, c.ffn, c.max_seq, c.vocab, c.padded_vocab,
            c.tied ? "tied" : "untied");
    return fmt::format("{} layers, {} heads, {} channels, {} positions, vocabulary {} (padded {})",
                       c.layers, c.heads, c.channels, c.max_seq, c.vocab, c.padded_vocab);
}

nlohmann::json model_config_json(const ModelConfig& c) {
    nlohmann::json j = {{"name", c.name},   {"arch", arch_name(c.arch)},     {"layers", c.layers},
                        {"heads", c.heads}, {"channels", c.channels},        {"max_seq", c.max_seq},
                        {"vocab", c.vocab}, {"padded_vocab", c.padded_vocab}};
    if (c.arch == Arch::kLlama) {
        j["kv_heads"] = c.kv_heads;
        j["ffn"] = c.ffn;
        j["rope_theta"] = c.rope_theta;
        j["norm_eps"] = c.norm_eps;
        j["tied"] = c.tied;
        j["qkv_bias"] = c.qkv_bias;
        if (c.rope_scaling.factor > 0)
            j["rope_scaling"] = {{"factor", c.rope_scaling.factor},
                                 {"low_freq_factor", c.rope_scaling.low_freq_factor},
                                 {"high_freq_factor", c.rope_scaling.high_freq_factor},
                                 {"original_max_positions", c.rope_scaling.original_max_positions}};
    }
    return j;
}

Result<ModelConfig> model_config_from_json(const nlohmann::json& j, std::string_view where) {
    ModelConfig c;
    try {
        c.name = j.value("name", std::string("custom"));
        const std::string arch = j.value("arch", std::string("gpt2"));
        if (arch == "llama")
            c.arch = Arch::kLlama;
        else if (arch != "gpt2")
            return Status(Errc::kInvalidInput,
                          fmt::format("{}: unknown model family \"{}\"", where, arch));
        c.layers = j.at("layers").get<int>();
        c.heads = j.at("heads").get<int>();
        c.channels = j.at("channels").get<int>();
        c.max_seq = j.at("max_seq").get<int>();
        c.vocab = j.at("vocab").get<int>();
        c.padded_vocab = j.at("padded_vocab").get<int>();
        if (c.arch == Arch::kLlama) {
            c.kv_heads = j.at("kv_heads").get<int>();
            c.ffn = j.at("ffn").get<int>();
            c.rope_theta = j.at("rope_theta").get<double>();
            c.norm_eps = j.at("norm_eps").get<double>();
            c.tied = j.at("tied").get<bool>();
            c.qkv_bias = j.value("qkv_bias", false);
            if (j.contains("rope_scaling")) {
                const auto& r = j.at("rope_scaling");
                c.rope_scaling.factor = r.at("factor").get<double>();
                c.rope_scaling.low_freq_factor = r.at("low_freq_factor").get<double>();
                c.rope_scaling.high_freq_factor = r.at("high_freq_factor").get<double>();
                c.rope_scaling.original_max_positions =
                    r.at("original_max_positions").get<int64_t>();
            }
        }
    } catch (const nlohmann::json::exception& e) {
        return Status(Errc::kInvalidInput,
                      fmt::format("{}: the model shape is incomplete ({})", where, e.what()));
    }
    return c;
}

}  // namespace trainrig::train

#include "train/model_config.h"

#include <fmt/format.h>

#include <array>

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

}  // namespace

Result<ModelConfig> preset_config(std::string_view name) {
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
    std::string known;
    for (const Preset& p : kPresets)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", p.name);
    return Status(Errc::kInvalidInput, fmt::format("unknown model '{}'", name),
                  fmt::format("use one of {}, or --layers/--heads/--dim", known));
}

std::vector<std::string> preset_names() {
    std::vector<std::string> out;
    for (const Preset& p : kPresets) out.emplace_back(p.name);
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
    return ok_status();
}

std::string config_hash(const ModelConfig& c) {
    // Over the canonical shape string: stable across builds and machines.
    const std::string canon = fmt::format("gpt2;L={};NH={};C={};maxT={};V={};Vp={}", c.layers,
                                          c.heads, c.channels, c.max_seq, c.vocab, c.padded_vocab);
    return fmt::format("{:016x}", fnv1a64(canon));
}

std::string describe(const ModelConfig& c) {
    return fmt::format("{} layers, {} heads, {} channels, {} positions, vocabulary {} (padded {})",
                       c.layers, c.heads, c.channels, c.max_seq, c.vocab, c.padded_vocab);
}

}  // namespace trainrig::train

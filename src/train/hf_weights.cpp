#include "train/hf_weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/user_file.h"
#include "train/param_layout.h"
#include "train/safetensors.h"

namespace trainrig::train {
namespace {

namespace fs = std::filesystem;

// The checkpoint's files, and which file holds each tensor.
struct Checkpoint {
    std::vector<std::unique_ptr<SafetensorsFile>> files;
    std::map<std::string, const SafetensorsFile*> where;
};

Result<Checkpoint> open_checkpoint(const std::string& path) {
    std::vector<std::string> paths;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const fs::path index = fs::path(path) / "model.safetensors.index.json";
        if (fs::exists(index, ec)) {
            auto text = read_user_file(index.string(), "--init-from", 64u << 20);
            if (!text.ok()) return text.status();
            const auto j = nlohmann::json::parse(*text, nullptr, false);
            if (j.is_discarded() || !j.contains("weight_map") || !j["weight_map"].is_object())
                return Status(Errc::kInvalidInput,
                              fmt::format("{} has no \"weight_map\" object", index.string()));
            std::set<std::string> shards;
            for (const auto& [name, file] : j["weight_map"].items()) {
                if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos)
                    return Status(Errc::kInvalidInput,
                                  fmt::format("{}: {} maps to {}, not a file name in the folder",
                                              index.string(), name, file.dump()));
                shards.insert(file.get<std::string>());
            }
            for (const std::string& s : shards) paths.push_back((fs::path(path) / s).string());
        } else {
            paths.push_back((fs::path(path) / "model.safetensors").string());
        }
    } else {
        paths.push_back(path);
    }
    Checkpoint c;
    for (const std::string& p : paths) {
        auto f = SafetensorsFile::open(p);
        if (!f.ok()) return f.status();
        c.files.push_back(std::make_unique<SafetensorsFile>(std::move(f).value()));
        for (const auto& [name, entry] : c.files.back()->tensors()) {
            if (c.where.contains(name))
                return Status(Errc::kInvalidInput, fmt::format("tensor {} is in both {} and {}",
                                                               name, c.where[name]->path(), p));
            c.where[name] = c.files.back().get();
        }
    }
    return c;
}

}  // namespace

Result<std::vector<float>> read_hf_weights(const std::string& path, const ModelConfig& c) {
    if (c.arch != Arch::kLlama)
        return Status(Errc::kUnsupported,
                      "--init-from reads Llama-family checkpoints (llama, mistral, qwen2)",
                      "give --model-config the checkpoint's config.json");
    auto opened = open_checkpoint(path);
    if (!opened.ok()) return opened.status();
    Checkpoint& ck = opened.value();

    const ParamLayout layout(c);
    std::vector<float> params(layout.total(), 0.0f);
    std::set<std::string> used;
    const size_t C = c.channels, V = c.vocab, L = c.layers;
    const size_t KV = c.kv_width(), QKV = c.qkv_width(), F = c.ffn_width();
    // Reads `name`, of exactly `shape`, into the slot at element `at`.
    auto take = [&](const std::string& name, Param slot, size_t at,
                    std::vector<int64_t> shape) -> Status {
        auto it = ck.where.find(name);
        if (it == ck.where.end())
            return Status(Errc::kInvalidInput, fmt::format("{} has no tensor {}, which a {} needs",
                                                           path, name, describe(c)));
        used.insert(name);
        const TensorEntry& e = it->second->tensors().at(name);
        if (e.shape != shape)
            return Status(Errc::kInvalidInput,
                          fmt::format("{}: tensor {} has shape [{}], the model expects [{}]",
                                      it->second->path(), name, fmt::join(e.shape, ", "),
                                      fmt::join(shape, ", ")),
                          "give --model-config the config.json saved with this checkpoint");
        size_t elements = 1;
        for (int64_t d : shape) elements *= static_cast<size_t>(d);
        const TensorSlot& s = layout[slot];
        return it->second->read(name, std::span<float>(params.data() + s.offset + at, elements));
    };
    const auto iC = static_cast<int64_t>(C), iKV = static_cast<int64_t>(KV),
               iF = static_cast<int64_t>(F);
    TRAINRIG_TRY(take("model.embed_tokens.weight", Param::kWte, 0, {static_cast<int64_t>(V), iC}));
    for (size_t l = 0; l < L; ++l) {
        const std::string p = fmt::format("model.layers.{}.", l);
        TRAINRIG_TRY(take(p + "input_layernorm.weight", Param::kLn1W, l * C, {iC}));
        const size_t qkv = l * QKV * C;
        TRAINRIG_TRY(take(p + "self_attn.q_proj.weight", Param::kQkvW, qkv, {iC, iC}));
        TRAINRIG_TRY(take(p + "self_attn.k_proj.weight", Param::kQkvW, qkv + C * C, {iKV, iC}));
        TRAINRIG_TRY(
            take(p + "self_attn.v_proj.weight", Param::kQkvW, qkv + (C + KV) * C, {iKV, iC}));
        if (c.qkv_bias) {
            TRAINRIG_TRY(take(p + "self_attn.q_proj.bias", Param::kQkvB, l * QKV, {iC}));
            TRAINRIG_TRY(take(p + "self_attn.k_proj.bias", Param::kQkvB, l * QKV + C, {iKV}));
            TRAINRIG_TRY(take(p + "self_attn.v_proj.bias", Param::kQkvB, l * QKV + C + KV, {iKV}));
        }
        TRAINRIG_TRY(take(p + "self_attn.o_proj.weight", Param::kAttnProjW, l * C * C, {iC, iC}));
        TRAINRIG_TRY(take(p + "post_attention_layernorm.weight", Param::kLn2W, l * C, {iC}));
        TRAINRIG_TRY(take(p + "mlp.gate_proj.weight", Param::kFcW, l * 2 * F * C, {iF, iC}));
        TRAINRIG_TRY(take(p + "mlp.up_proj.weight", Param::kFcW, l * 2 * F * C + F * C, {iF, iC}));
        TRAINRIG_TRY(take(p + "mlp.down_proj.weight", Param::kFcProjW, l * C * F, {iC, iF}));
    }
    TRAINRIG_TRY(take("model.norm.weight", Param::kLnfW, 0, {iC}));
    if (!c.tied_output()) {
        TRAINRIG_TRY(take("lm_head.weight", Param::kLmHead, 0, {static_cast<int64_t>(V), iC}));
    } else if (ck.where.contains("lm_head.weight")) {
        used.insert("lm_head.weight");  // a tied model saved with its (identical) head
    }
    for (const auto& [name, file] : ck.where) {
        if (used.contains(name) || name.ends_with("rotary_emb.inv_freq")) continue;
        return Status(Errc::kInvalidInput,
                      fmt::format("{} holds tensor {}, which a {} does not have", file->path(),
                                  name, describe(c)),
                      "give --model-config the config.json saved with this checkpoint");
    }
    return params;
}

}  // namespace trainrig::train

#include "train/train_plugin_support.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

namespace trainrig::train {

Result<ModelRequest> parse_model_request(std::string_view json) {
    const auto j = nlohmann::json::parse(json, nullptr, false);
    auto bad = [](std::string what) {
        return Status(Errc::kInvalidInput, fmt::format("the model request {}", what));
    };
    if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
        return bad("is not an object with a \"model\"");
    ModelRequest r;
    try {
        auto model = model_config_from_json(j.at("model"), "the model request");
        if (!model.ok()) return model.status();
        r.model = std::move(model).value();
        const auto& o = j.at("optimizer");
        r.opt.beta1 = o.at("beta1").get<double>();
        r.opt.beta2 = o.at("beta2").get<double>();
        r.opt.eps = o.at("eps").get<double>();
        r.opt.weight_decay = o.at("weight_decay").get<double>();
        r.opt.grad_clip = o.at("grad_clip").get<double>();
        r.batch = j.at("batch").get<int>();
        r.seq = j.at("seq").get<int>();
        r.bucket_bytes = j.at("bucket_bytes").get<size_t>();
    } catch (const nlohmann::json::exception& e) {
        return bad(fmt::format("is incomplete: {}", e.what()));
    }
    TRAINRIG_TRY(validate(r.model));
    TRAINRIG_TRY(validate(r.opt));
    if (r.batch < 1 || r.seq < 1 || r.seq > r.model.max_seq)
        return bad(fmt::format("has batch {} and sequence {} (at most {})", r.batch, r.seq,
                               r.model.max_seq));
    return r;
}

char* plugin_error(const Status& s) {
    if (s.ok()) return nullptr;
    const std::string text =
        fmt::format("{}\t{}\t{}", errc_name(s.code()), s.message(), s.next_step());
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

}  // namespace trainrig::train

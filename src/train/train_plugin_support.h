// What both sides of train_plugin_abi.h's plugins share inside the plugin: the model request
// parsed from its JSON, and a Status turned into the ABI's error text.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/status.h"
#include "train/model_config.h"
#include "train/optimizer.h"

namespace trainrig::train {

struct ModelRequest {
    ModelConfig model;
    OptimizerConfig opt;  // lr and the schedule stay with the caller
    int batch = 0, seq = 0;
    size_t bucket_bytes = 0;
};

// A request that misses a field or holds an invalid shape is an error naming it.
Result<ModelRequest> parse_model_request(std::string_view json);

// nullptr for ok, else malloc'd "errc<TAB>message<TAB>next step" (freed with std::free).
char* plugin_error(const Status& s);

// Runs f (returning Status) and reports its result, an exception included, as plugin_error.
template <class F>
char* plugin_call(F&& f) noexcept {
    try {
        return plugin_error(f());
    } catch (const std::exception& e) {
        return plugin_error(Status(Errc::kInternal, e.what()));
    } catch (...) {
        return plugin_error(Status(Errc::kInternal, "an unknown exception"));
    }
}

}  // namespace trainrig::train

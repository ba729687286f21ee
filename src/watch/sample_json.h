// One tick as `trainrig.watch.sample` JSON (docs/formats.md), both ways: `watch --once --json`
// writes it and `watch replay` reads a sequence of them back, so a recorded or hand-written time
// line is judged by the same rules as the daemon. Each GPU field is named once, in
// sample_json.cpp, for both directions.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"
#include "watch/gpu_sample.h"
#include "watch/kernel_events.h"

namespace trainrig::watch {

// The fields of one GPU's sample (state, problem and every reading), added to `out`.
void put_gpu_sample(const GpuSample& s, nlohmann::json& out);

// A tick read back: what the engine needs to judge it.
struct ReplayTick {
    NodeSample sample;
    std::vector<GpuIdentity> gpus;
    std::vector<KernelEvent> events;
};
// kInvalidInput naming the member when the document is not a trainrig.watch.sample.
Result<ReplayTick> tick_from_json(const nlohmann::json& doc);

}  // namespace trainrig::watch

// What every GPU benchmark receives (the parsed request, the selected GPUs, the cancel flag)
// and the record it produces, in the shape gpu_plugin_abi.h defines.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "cuda/bench/gpu_inventory.h"
#include "measure/sweep_size.h"

namespace trainrig::cuda {

struct BenchRequest {
    std::string bench;
    bool quick = false;
    std::vector<int> gpus;  // empty: all
    double seconds = 0;     // burn duration; 0 = the bench's default
    int repeats = 0;        // timed samples; 0 = the bench's default
};

struct BenchContext {
    BenchRequest request;
    std::vector<GpuInfo> gpus;  // selected, in request order
    RootFs fs;
    const volatile int* cancel = nullptr;

    // Every selected GPU an emulated one (core/emulated_gpu.h): the emulated sizes.
    bool emulated = false;

    bench::SweepSize sweep() const {
        return emulated        ? bench::SweepSize::kEmulated
               : request.quick ? bench::SweepSize::kQuick
                               : bench::SweepSize::kFull;
    }
    // This run's value of a benchmark's size (measure/sweep_size.h).
    template <class T>
    T sized(T full, T quick, T emulated_size) const {
        return bench::sized(sweep(), full, quick, emulated_size);
    }

    bool cancelled() const { return cancel != nullptr && *cancel != 0; }
    // The request's repeats, or `fallback` when it asked for the default.
    int repeats_or(int fallback) const { return request.repeats > 0 ? request.repeats : fallback; }
};

// The Status a benchmark returns when the cancel flag stopped it; plugin_entry turns it into
// "error": "interrupted".
inline Status interrupted() { return {Errc::kInternal, "interrupted"}; }
#define TRAINRIG_STOP_IF_CANCELLED(ctx)                                \
    do {                                                               \
        if ((ctx).cancelled()) return ::trainrig::cuda::interrupted(); \
    } while (0)

// One measured quantity (gpu_plugin_abi.h): trainrig adds the expectation and the verdict.
struct GpuRecord {
    std::string bench;
    std::string name;
    nlohmann::json params = nlohmann::json::object();
    nlohmann::json target = nlohmann::json::object();
    std::string unit;
    std::vector<double> samples;
    nlohmann::json counted = nlohmann::json::object();
    bool verified = false;
    std::string verify_detail;

    nlohmann::json to_json() const {
        return {{"bench", bench},     {"name", name},         {"params", params},
                {"target", target},   {"unit", unit},         {"samples", samples},
                {"counted", counted}, {"verified", verified}, {"verify_detail", verify_detail}};
    }
};

// What a benchmark gives back: its records, and whether this process reports them. Under a
// multi-process launch (nccl, nccl-pairs) every rank measures and only rank 0 reports; the
// others answer "reporting": false (gpu_plugin_abi.h) and `bench run` prints nothing for them.
struct Records {
    std::vector<nlohmann::json> list;
    bool reporting = true;

    void push_back(nlohmann::json record) { list.push_back(std::move(record)); }
};

}  // namespace trainrig::cuda

// The plugin's C boundary (measure/gpu_plugin_abi.h): JSON in, JSON out, dispatch to the
// benchmark asked for. No exception crosses it: every one is caught and becomes "error".
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/emulated_gpu.h"
#include "cuda/bench/benchmarks.h"
#include "cuda/bench/gpu_inventory.h"
#include "measure/gpu_benchmarks.h"

// Only the three ABI functions are exported; the rest of the plugin (and trainrig_core, which
// it links statically) stays hidden so it cannot clash with the binary that loads it.
#pragma GCC visibility push(default)
#include "measure/gpu_plugin_abi.h"
#pragma GCC visibility pop

namespace trainrig::cuda {
namespace {

// The run function of each benchmark of measure/gpu_benchmarks.h, in its order.
constexpr std::array<GpuBenchmark, bench::kGpuBenchmarks.size()> kBenchmarks = {{
    {"h2d", run_copy_bench},
    {"d2h", run_copy_bench},
    {"hbm", run_hbm_bench},
    {"gemm", run_gemm_bench},
    {"p2p", run_p2p_bench},
    {"nccl", run_nccl_bench},
    {"nccl-pairs", run_nccl_pairs_bench},
    {"burn", run_burn_bench},
}};

// One list: the plugin runs exactly the benchmarks `trainrig bench list` shows.
constexpr bool same_ids() {
    for (size_t i = 0; i < kBenchmarks.size(); ++i)
        if (std::string_view(kBenchmarks[i].id) != std::string_view(bench::kGpuBenchmarks[i].id))
            return false;
    return true;
}
static_assert(same_ids(), "kBenchmarks must list measure/gpu_benchmarks.h's ids in its order");

char* to_c_string(const nlohmann::json& j) {
    // Invalid UTF-8 from a device name or an error string is replaced, never thrown on.
    const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    char* out = static_cast<char*>(std::malloc(s.size() + 1));
    if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

nlohmann::json list_json() {
    nlohmann::json devices = nlohmann::json::array();
    auto gpus = list_gpus(RootFs("/"));
    if (!gpus.ok())
        return {{"abi", TRAINRIG_GPU_BENCH_ABI},
                {"devices", devices},
                {"error", gpus.status().message()}};
    for (const auto& g : *gpus) devices.push_back(device_json(g));
    return {{"abi", TRAINRIG_GPU_BENCH_ABI}, {"devices", devices}, {"error", nullptr}};
}

Result<BenchRequest> parse_request(const char* text) {
    if (text == nullptr) return Status{Errc::kInvalidInput, "the request is null"};
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status{Errc::kInvalidInput, "the request is not a JSON object"};
    BenchRequest r;
    if (!j.contains("bench") || !j["bench"].is_string())
        return Status{Errc::kInvalidInput, "the request names no \"bench\""};
    r.bench = j["bench"].get<std::string>();
    r.quick = j.contains("quick") && j["quick"].is_boolean() && j["quick"].get<bool>();
    if (j.contains("gpus") && !j["gpus"].is_null()) {
        if (!j["gpus"].is_array())
            return Status{Errc::kInvalidInput, "\"gpus\" must be a list of GPU indices"};
        for (const auto& g : j["gpus"]) {
            if (!g.is_number_integer())
                return Status{Errc::kInvalidInput, "\"gpus\" must be a list of GPU indices"};
            r.gpus.push_back(g.get<int>());
        }
    }
    if (j.contains("seconds") && j["seconds"].is_number()) r.seconds = j["seconds"].get<double>();
    if (j.contains("repeats") && j["repeats"].is_number_integer())
        r.repeats = j["repeats"].get<int>();
    if (r.seconds < 0 || r.repeats < 0)
        return Status{Errc::kInvalidInput, "\"seconds\" and \"repeats\" must not be negative"};
    return r;
}

// Runs one request; records measured before a failure are kept.
nlohmann::json run_json(const char* request_text, const volatile int* cancel) {
    Records records;
    auto reply = [&records](const Status& s) {
        nlohmann::json err = nullptr;
        if (!s.ok())
            err = s.next_step().empty() ? s.message()
                                        : fmt::format("{}; {}", s.message(), s.next_step());
        return nlohmann::json{
            {"records", records.list}, {"reporting", records.reporting}, {"error", err}};
    };
    auto request = parse_request(request_text);
    if (!request.ok()) return reply(request.status());
    const GpuBenchmark* bench = nullptr;
    for (const auto& b : kBenchmarks)
        if (request->bench == b.id) bench = &b;
    if (bench == nullptr) {
        std::string known;
        for (const auto& b : kBenchmarks) known += (known.empty() ? "" : ", ") + std::string(b.id);
        return reply(
            {Errc::kInvalidInput, fmt::format("unknown GPU benchmark \"{}\" (this plugin has {})",
                                              request->bench, known)});
    }
    BenchContext ctx{*request, {}, RootFs("/"), cancel};
    auto all = list_gpus(ctx.fs);
    if (!all.ok()) return reply(all.status());
    auto selected = select_gpus(*all, request->gpus);
    if (!selected.ok()) return reply(selected.status());
    ctx.gpus = std::move(selected).value();
    ctx.emulated =
        !ctx.gpus.empty() && std::all_of(ctx.gpus.begin(), ctx.gpus.end(),
                                         [](const GpuInfo& g) { return is_emulated_gpu(g.name); });
    return reply(bench->run(ctx, records));
}

nlohmann::json exception_reply(const char* what) {
    return {{"records", nlohmann::json::array()},
            {"error", fmt::format("internal error in the GPU benchmark plugin: {}", what)}};
}

}  // namespace
}  // namespace trainrig::cuda

extern "C" char* trainrig_gpu_bench_list(void) {
    using trainrig::cuda::to_c_string;
    try {
        return to_c_string(trainrig::cuda::list_json());
    } catch (const std::exception& e) {
        try {
            return to_c_string({{"abi", TRAINRIG_GPU_BENCH_ABI},
                                {"devices", nlohmann::json::array()},
                                {"error", std::string("internal error: ") + e.what()}});
        } catch (...) {
            return nullptr;
        }
    } catch (...) {
        return nullptr;
    }
}

extern "C" char* trainrig_gpu_bench_run(const char* request_json, const volatile int* cancel) {
    using trainrig::cuda::to_c_string;
    try {
        return to_c_string(trainrig::cuda::run_json(request_json, cancel));
    } catch (const std::exception& e) {
        try {
            return to_c_string(trainrig::cuda::exception_reply(e.what()));
        } catch (...) {
            return nullptr;
        }
    } catch (...) {
        try {
            return to_c_string(trainrig::cuda::exception_reply("unknown exception"));
        } catch (...) {
            return nullptr;
        }
    }
}

extern "C" void trainrig_gpu_bench_free(char* json) { std::free(json); }

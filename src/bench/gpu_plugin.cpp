#include "bench/gpu_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "core/cancel_signals.h"
#include "core/plugin_library.h"
#include "measure/bench_document.h"
#include "measure/gpu_plugin_abi.h"

namespace trainrig::bench {
namespace {

constexpr const char* kPluginName = "libtrainrig_gpu_bench.so";

// The loaded plugin, or why there is none. Loaded once, on the first question.
class Plugin {
public:
    static Plugin& get() {
        static Plugin p;
        return p;
    }
    const std::string& unavailable() const { return unavailable_; }
    const nlohmann::json& listing() const { return listing_; }

    Result<nlohmann::json> run(const nlohmann::json& request) const {
        char* out = run_(request.dump().c_str(), CancelSignals::flag_int());
        if (!out) return Status{Errc::kInternal, "the GPU benchmark plugin returned nothing"};
        const std::string text(out);
        free_(out);
        auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return Status{Errc::kInternal, "the GPU benchmark plugin returned malformed JSON"};
        return j;
    }

private:
    Plugin() {
        // Errors worth showing: a plugin that exists but does not load (a CUDA library it needs
        // is missing). Not finding the plugin at all means this build has no GPU benchmarks.
        const PluginLibrary lib = load_plugin_library(kPluginName, "TRAINRIG_GPU_BENCH_PLUGIN");
        handle_ = lib.handle;
        const std::string& errors = lib.error;
        if (!handle_) {
            unavailable_ = errors.empty()
                               ? "this trainrig has no GPU benchmarks (built without CUDA, or " +
                                     std::string(kPluginName) + " is not beside it)"
                               : "the GPU benchmarks could not be loaded: " + errors;
            return;
        }
        list_ = reinterpret_cast<char* (*)()>(::dlsym(handle_, "trainrig_gpu_bench_list"));
        run_ = reinterpret_cast<char* (*)(const char*, const volatile int*)>(
            ::dlsym(handle_, "trainrig_gpu_bench_run"));
        free_ = reinterpret_cast<void (*)(char*)>(::dlsym(handle_, "trainrig_gpu_bench_free"));
        if (!list_ || !run_ || !free_) {
            unavailable_ =
                fmt::format("{} lacks the trainrig_gpu_bench_* entry points", kPluginName);
            return;
        }
        char* out = list_();
        listing_ = nlohmann::json::parse(out ? out : "", nullptr, false);
        if (out) free_(out);
        if (listing_.is_discarded() || !listing_.is_object() ||
            listing_.value("abi", 0) != TRAINRIG_GPU_BENCH_ABI) {
            unavailable_ =
                fmt::format("{} speaks another interface version than this trainrig", kPluginName);
            listing_ = nlohmann::json::object();
            return;
        }
        if (listing_.contains("error") && listing_["error"].is_string())
            unavailable_ = listing_["error"].get<std::string>();
    }

    void* handle_ = nullptr;  // never closed: CUDA libraries do not unload cleanly
    char* (*list_)() = nullptr;
    char* (*run_)(const char*, const volatile int*) = nullptr;
    void (*free_)(char*) = nullptr;
    nlohmann::json listing_ = nlohmann::json::object();
    std::string unavailable_;
};

// Ranks of a multi-process launch as the nccl benchmark bootstraps them (Open MPI, PMI as srun
// and MPICH set it, torchrun), 1 when run alone.
int launched_ranks() {
    for (const char* key : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "WORLD_SIZE"})
        if (const char* v = std::getenv(key); v && std::atoi(v) > 0) return std::atoi(v);
    return 1;
}

class GpuBench : public Benchmark {
public:
    GpuBench(const char* id, const char* description, int min_gpus, bool across_nodes)
        : id_(id), description_(description), min_gpus_(min_gpus), across_nodes_(across_nodes) {}
    const char* id() const override { return id_; }
    const char* description() const override { return description_; }

    std::string skip_reason(const BenchContext& ctx) const override {
        const Plugin& p = Plugin::get();
        if (!p.unavailable().empty()) return p.unavailable();
        if (across_nodes_ && launched_ranks() < 2)
            return fmt::format(
                "runs under mpirun across nodes, one process per GPU (mpirun "
                "-npernode G --hostfile hosts trainrig bench run {})",
                id_);
        const auto& devices = p.listing().value("devices", nlohmann::json::array());
        const int usable = ctx.options.gpus.empty() ? static_cast<int>(devices.size())
                                                    : static_cast<int>(ctx.options.gpus.size());
        if (std::max(usable, launched_ranks()) < min_gpus_)
            return fmt::format("needs at least {} GPUs (or ranks under a launcher); {} here",
                               min_gpus_, usable);
        return {};
    }

    Status run(const BenchContext& ctx, std::vector<BenchRecord>& out) override {
        const nlohmann::json request = {{"bench", id_},
                                        {"quick", ctx.options.quick},
                                        {"gpus", ctx.options.gpus},
                                        {"seconds", ctx.options.seconds},
                                        {"repeats", ctx.options.repeats}};
        auto answer = Plugin::get().run(request);
        if (!answer) return answer.status();
        reporting_ = answer->value("reporting", true);
        // Records come back even when the benchmark stopped part way (the ABI's promise).
        for (const auto& j : answer->value("records", nlohmann::json::array())) {
            auto r = record_from_json(j);
            if (!r) return r.status();
            out.push_back(std::move(r).value());
        }
        if (const auto e = answer->find("error"); e != answer->end() && e->is_string()) {
            if (ctx.cancelled()) return interrupted_status();
            return Status{Errc::kIo, e->get<std::string>()};
        }
        return Status{};
    }

    bool reports_here() const override { return reporting_; }

private:
    const char* id_;
    const char* description_;
    int min_gpus_;
    bool across_nodes_;
    bool reporting_ = true;
};

}  // namespace

std::unique_ptr<Benchmark> make_gpu_bench(const GpuBenchmarkInfo& info) {
    return std::make_unique<GpuBench>(info.id, info.description, info.min_gpus, info.across_nodes);
}

nlohmann::json gpu_devices() {
    const Plugin& p = Plugin::get();
    return p.listing().value("devices", nlohmann::json::array());
}

}  // namespace trainrig::bench

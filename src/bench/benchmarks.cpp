// The list of benchmarks `trainrig bench list` shows and `bench run` chooses from, and the
// data-path benchmarks (tokenizer, loader) in the Benchmark shape.
#include <fmt/format.h>

#include "bench/cpu_mem_bench.h"
#include "bench/gpu_plugin.h"
#include "bench/loader_bench.h"
#include "bench/storage_bench.h"
#include "bench/tokenizer_bench.h"
#include "bench/train_bench.h"
#include "data/tokenizer/open_tokenizer.h"
#include "measure/gpu_benchmarks.h"

namespace trainrig::bench {
namespace {

Status append(Result<std::vector<BenchRecord>> records, std::vector<BenchRecord>& out) {
    if (!records) return records.status();
    for (auto& r : *records) out.push_back(std::move(r));
    return Status{};
}

class TokenizerBench : public Benchmark {
public:
    const char* id() const override { return "tokenizer"; }
    const char* description() const override {
        return "Encode bytes/s, tokens/s and documents/s of --tokenizer on --input text";
    }
    std::string skip_reason(const BenchContext& ctx) const override {
        if (ctx.options.tokenizer.empty() || ctx.options.inputs.empty())
            return "needs --tokenizer and --input";
        return {};
    }
    Status run(const BenchContext& ctx, std::vector<BenchRecord>& out) override {
        auto t = data::open_tokenizer(ctx.options.tokenizer);
        if (!t) return t.status();
        TokenizerBenchOptions o;
        o.inputs = ctx.options.inputs;
        o.threads = ctx.options.tokenizer_threads;
        if (ctx.options.repeats) o.repeats = ctx.options.repeats;
        return append(run_tokenizer_bench(**t, o), out);
    }
};

class LoaderBench : public Benchmark {
public:
    const char* id() const override { return "loader"; }
    const char* description() const override {
        return "Batches, tokens and bytes per second the window loader yields from --shards";
    }
    std::string skip_reason(const BenchContext& ctx) const override {
        return ctx.options.shards.empty() ? "needs --shards (Megatron prefixes or llm.c shards)"
                                          : "";
    }
    Status run(const BenchContext& ctx, std::vector<BenchRecord>& out) override {
        LoaderBenchOptions o;
        o.data = ctx.options.shards;
        o.batch = ctx.options.batch;
        o.window = ctx.options.window;
        o.steps = ctx.options.steps;
        if (ctx.options.repeats) o.repeats = ctx.options.repeats;
        return append(run_loader_bench(o), out);
    }
};

class TrainBench : public Benchmark {
public:
    const char* id() const override { return "train"; }
    const char* description() const override {
        return "Reference GPT-2 training: tokens/s, model FLOP/s, step time, peak memory";
    }
    std::string skip_reason(const BenchContext&) const override { return {}; }
    Status run(const BenchContext& ctx, std::vector<BenchRecord>& out) override {
        TrainBenchOptions o;
        o.backend = ctx.options.train_backend;
        o.model = ctx.options.train_model;
        o.seq = ctx.options.train_seq;
        o.batch = ctx.options.train_batch;
        o.threads = static_cast<int>(ctx.options.threads);
        if (ctx.options.quick) {
            o.warmup_steps = 1;
            o.timed_steps = 3;
        }
        return append(run_train_bench(o), out);
    }
};

}  // namespace

std::vector<std::unique_ptr<Benchmark>> make_benchmarks() {
    std::vector<std::unique_ptr<Benchmark>> list;
    list.push_back(make_cpu_mem_bench());
    list.push_back(make_storage_bench());
    for (const GpuBenchmarkInfo& g : kGpuBenchmarks) list.push_back(make_gpu_bench(g));
    list.push_back(std::make_unique<TokenizerBench>());
    list.push_back(std::make_unique<LoaderBench>());
    list.push_back(std::make_unique<TrainBench>());
    return list;
}

Status interrupted_status() {
    return Status{Errc::kIo, "interrupted; the benchmark removed what it had created"};
}

}  // namespace trainrig::bench

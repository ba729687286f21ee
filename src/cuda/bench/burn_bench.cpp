// burn: sustained bf16 GEMM load on every selected GPU at once for `seconds`, gpu-burn's idea:
// the same inputs every iteration, so every output must be bit-identical to the first, run to
// run and GPU to GPU; a GPU that computes wrong under heat or power stress shows mismatches.
// NVML is sampled alongside (temperature, SM clock, power); its absence is reported, not fatal.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <map>
#include <optional>
#include <thread>

#include "core/fnv1a.h"
#include "cuda/bench/benchmarks.h"
#include "cuda/bench/gemm_check.h"
#include "cuda/bench/nvml_sampler.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/lt_matmul.h"
#include "measure/bench_record.h"

namespace trainrig::cuda {
namespace {

using bench::GemmDtype;
using Clock = std::chrono::steady_clock;

// 8192³ bf16: about 1.4 ms per product on an H200, large enough to keep every SM busy (256³ on
// an emulated device).
bench::GemmShape burn_shape(const BenchContext& ctx) {
    const int64_t side = ctx.sized<int64_t>(8192, 8192, 256);
    return {side, side, side, "square"};
}
constexpr double kIntervalSeconds = 1.0;  // one sample and one compare per interval

struct BurnResult {
    std::vector<double> samples;  // FLOP/s per interval
    uint64_t iterations = 0;
    uint64_t mismatches = 0;  // 32-bit words of an output that differ from the first output
    uint64_t compares = 0;
    uint64_t checksum = 0;  // FNV-1a of the first output, for the cross-GPU comparison
    int iterations_per_interval = 0;
    bool reference_ok = true;  // the first output against the fp64 CPU reference
    std::string reference_detail;
    Status status;
};

uint64_t fnv1a(const std::vector<uint32_t>& words) {
    return fnv1a64(words.data(), words.size() * sizeof(uint32_t));
}

// Counts down a latch exactly once: when the load starts, or when the thread ends without
// getting there, so the waiting thread never waits for a GPU that failed.
class StartSignal {
public:
    explicit StartSignal(std::latch& l) : latch_(l) {}
    StartSignal(const StartSignal&) = delete;
    StartSignal& operator=(const StartSignal&) = delete;
    ~StartSignal() { arrive(); }
    void arrive() {
        if (!arrived_) latch_.count_down();
        arrived_ = true;
    }

private:
    std::latch& latch_;
    bool arrived_ = false;
};

// The load runs `seconds` from the moment this GPU's set-up is done; `started` is signalled then.
Status burn_one(const BenchContext& ctx, const GpuInfo& gpu, double seconds, StartSignal& started,
                BurnResult& out) {
    CUDA_TRY(cudaSetDevice(gpu.index));
    const GemmDtype d = GemmDtype::kBf16;
    const bench::GemmShape shape = burn_shape(ctx);
    const auto m = static_cast<size_t>(shape.m), n = static_cast<size_t>(shape.n),
               k = static_cast<size_t>(shape.k);
    auto handle = make_lt_handle();
    auto stream = make_stream();
    auto start = make_event();
    auto stop = make_event();
    auto a = device_alloc(k * m * 2);
    auto b = device_alloc(k * n * 2);
    auto dst = device_alloc(m * n * 2);
    auto ref = device_alloc(m * n * 2);
    auto ws = device_alloc(kLtWorkspaceBytes);
    auto counter = device_alloc(sizeof(unsigned long long));
    for (const Status* s :
         {&handle.status(), &stream.status(), &start.status(), &stop.status(), &a.status(),
          &b.status(), &dst.status(), &ref.status(), &ws.status(), &counter.status()})
        TRAINRIG_TRY(*s);
    const cudaStream_t st = stream->get();
    // The same seeds on every GPU: identical inputs, so identical outputs.
    TRAINRIG_TRY(fill_uniform(a->get(), d, k * m, 0xB0A1u, st));
    TRAINRIG_TRY(fill_uniform(b->get(), d, k * n, 0xB0B2u, st));
    auto mm = LtMatmul::create(d, shape, /*deterministic=*/true);
    if (!mm.ok()) return mm.status();
    auto algos = mm->algorithms(handle->get(), 1);
    if (!algos.ok()) return algos.status();
    const cublasLtMatmulAlgo_t algo = algos->front();
    auto run = [&]() {
        return mm->run(handle->get(), algo, a->get(), b->get(), dst->get(), ws->get(), st);
    };
    // The reference output, and an estimate of one product's time.
    TRAINRIG_TRY(run());
    CUDA_TRY(cudaMemcpyAsync(ref->get(), dst->get(), m * n * 2, cudaMemcpyDeviceToDevice, st));
    CUDA_TRY(cudaEventRecord(start->get(), st));
    for (int i = 0; i < 5; ++i) TRAINRIG_TRY(run());
    CUDA_TRY(cudaEventRecord(stop->get(), st));
    auto ms = elapsed_ms(start->get(), stop->get());
    if (!ms.ok()) return ms.status();
    out.iterations_per_interval = std::max(1, static_cast<int>(kIntervalSeconds / (*ms / 1e3 / 5)));
    std::vector<uint32_t> host(m * n / 2);
    CUDA_TRY(cudaMemcpy(host.data(), ref->get(), m * n * 2, cudaMemcpyDeviceToHost));
    out.checksum = fnv1a(host);
    // The first output against the CPU reference at sampled elements: the comparisons below only
    // show that the GPU repeats itself, and a lone GPU has no other to be outvoted by.
    auto right = check_product(d, shape, a->get(), b->get(), ref->get(), 64, st);
    if (!right.ok()) return right.status();
    out.reference_ok = right->check.failed == 0;
    out.reference_detail = right->detail;

    auto* count = static_cast<unsigned long long*>(counter->get());
    const double flops = bench::gemm_flops(shape);
    started.arrive();
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    while (Clock::now() < deadline && !ctx.cancelled()) {
        CUDA_TRY(cudaEventRecord(start->get(), st));
        for (int i = 0; i < out.iterations_per_interval; ++i) TRAINRIG_TRY(run());
        CUDA_TRY(cudaEventRecord(stop->get(), st));
        // Compare the last output of the interval with the reference, bit for bit.
        CUDA_TRY(cudaMemsetAsync(count, 0, sizeof *count, st));
        TRAINRIG_TRY(count_word_mismatches(static_cast<const uint32_t*>(dst->get()),
                                           static_cast<const uint32_t*>(ref->get()), m * n / 2,
                                           count, st));
        unsigned long long bad = 0;
        CUDA_TRY(cudaMemcpyAsync(&bad, count, sizeof bad, cudaMemcpyDeviceToHost, st));
        auto t = elapsed_ms(start->get(), stop->get());
        if (!t.ok()) return t.status();
        TRAINRIG_TRY(wait_stream(st));
        out.samples.push_back(flops * out.iterations_per_interval / (*t / 1e3));
        out.iterations += static_cast<uint64_t>(out.iterations_per_interval);
        out.mismatches += bad;
        ++out.compares;
    }
    return {};
}

nlohmann::json summary(const std::vector<double>& v, bool max_too) {
    if (v.empty()) return nullptr;
    nlohmann::json j = {{"min", *std::min_element(v.begin(), v.end())},
                        {"median", bench::median_of(v)}};
    if (max_too) j["max"] = *std::max_element(v.begin(), v.end());
    return j;
}

}  // namespace

Status run_burn_bench(const BenchContext& ctx, Records& out) {
    const double seconds =
        ctx.request.seconds > 0 ? ctx.request.seconds : ctx.sized(30.0, 10.0, 3.0);
    std::vector<BurnResult> results(ctx.gpus.size());
    std::latch loaded(static_cast<std::ptrdiff_t>(ctx.gpus.size()));
    std::optional<NvmlSampler> nvml;
    {
        std::vector<std::jthread> threads;
        for (size_t i = 0; i < ctx.gpus.size(); ++i)
            threads.emplace_back([&, i] {
                StartSignal started(loaded);
                // An exception must not leave the thread (std::terminate); it becomes the status.
                try {
                    results[i].status = burn_one(ctx, ctx.gpus[i], seconds, started, results[i]);
                } catch (const std::exception& e) {
                    results[i].status = Status{Errc::kInternal, e.what()};
                }
            });
        // Sample only under load: the idle clocks of the set-up would pull the minimum down.
        loaded.wait();
        nvml.emplace(ctx.gpus, std::chrono::milliseconds(500));
    }
    nvml->stop();
    for (const auto& r : results) TRAINRIG_TRY(r.status);
    TRAINRIG_STOP_IF_CANCELLED(ctx);
    // Cross-GPU: the checksum most GPUs of the same model produced is taken as right.
    std::map<std::string, std::map<uint64_t, int>> votes;
    // Same name and multiprocessor count: cuBLAS results are reproducible only on the same
    // architecture and SM count.
    const auto model = [&](size_t i) {
        return fmt::format("{}/{}", ctx.gpus[i].name, ctx.gpus[i].sm_count);
    };
    for (size_t i = 0; i < results.size(); ++i) ++votes[model(i)][results[i].checksum];
    for (size_t i = 0; i < results.size(); ++i) {
        const BurnResult& r = results[i];
        const auto& v = votes[model(i)];
        const auto top = std::max_element(
            v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
        const bool agrees = v.size() == 1 || (r.checksum == top->first &&
                                              std::count_if(v.begin(), v.end(), [&](const auto& e) {
                                                  return e.second == top->second;
                                              }) == 1);
        GpuRecord rec;
        rec.bench = "burn";
        rec.name = "bf16";
        rec.unit = "FLOP/s";
        rec.target = target_json(ctx.gpus[i]);
        const bench::GemmShape shape = burn_shape(ctx);
        rec.params = {{"seconds", seconds},
                      {"m", shape.m},
                      {"n", shape.n},
                      {"k", shape.k},
                      {"dtype", "bf16"},
                      {"gpus_at_once", ctx.gpus.size()},
                      {"interval_seconds", kIntervalSeconds}};
        rec.samples = r.samples;
        rec.counted = {{"iterations", r.iterations},
                       {"iterations_per_sample", r.iterations_per_interval},
                       {"flops_per_iteration", bench::gemm_flops(shape)},
                       {"compares", r.compares},
                       {"mismatches", r.mismatches},
                       {"output_checksum", fmt::format("{:016x}", r.checksum)}};
        if (nvml->available() && nvml->series(i).matched) {
            const GpuSeries& s = nvml->series(i);
            rec.counted["temperature_c"] = summary(s.temperature_c, true);
            rec.counted["temperature_max_c"] =
                s.temperature_c.empty() ? nlohmann::json(nullptr)
                                        : nlohmann::json(*std::max_element(s.temperature_c.begin(),
                                                                           s.temperature_c.end()));
            rec.counted["sm_clock_mhz"] = summary(s.sm_clock_mhz, true);
            rec.counted["power_w"] = summary(s.power_w, true);
            rec.counted["nvml_samples"] = s.temperature_c.size();
        } else {
            rec.counted["nvml"] = nvml->available() ? "NVML has no device at this GPU's PCI address"
                                                    : "NVML unavailable: " + nvml->why();
        }
        rec.verified = r.mismatches == 0 && agrees && r.compares > 0 && r.reference_ok;
        if (!r.reference_ok)
            rec.verify_detail = "the product differs from the CPU reference: " + r.reference_detail;
        else if (r.compares == 0)
            rec.verify_detail = "no interval completed, nothing was compared";
        else if (r.mismatches != 0)
            rec.verify_detail = fmt::format(
                "{} words differed from the first output over {} compares of {} iterations",
                r.mismatches, r.compares, r.iterations);
        else if (!agrees)
            rec.verify_detail =
                "this GPU's output differs from that of the other GPUs of its model "
                "given the same inputs";
        else
            rec.verify_detail = fmt::format(
                "{} compares over {} iterations: output bit-identical to the first{}", r.compares,
                r.iterations, ctx.gpus.size() > 1 ? " and to the other GPUs'" : "");
        out.push_back(rec.to_json());
    }
    return {};
}

}  // namespace trainrig::cuda

// hbm: device memory bandwidth from device-to-device copies (cudaMemcpyAsync, copy engines and
// SMs as the driver picks), bytes read plus bytes written counted, the STREAM-copy convention
// the published H200 figures use (≈ 4.3 TB/s measured on an H200 this way with PyTorch).
#include <fmt/format.h>

#include "cuda/bench/benchmarks.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"

namespace trainrig::cuda {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

Result<GpuRecord> measure(const BenchContext& ctx, const GpuInfo& gpu, size_t bytes, int copies,
                          int samples) {
    CUDA_TRY(cudaSetDevice(gpu.index));
    auto src = device_alloc(bytes);
    if (!src.ok()) return src.status();
    auto dst = device_alloc(bytes);
    if (!dst.ok()) return dst.status();
    auto counter = device_alloc(sizeof(unsigned long long));
    if (!counter.ok()) return counter.status();
    auto timed = make_timed_stream();
    if (!timed.ok()) return timed.status();
    const cudaStream_t st = timed->get();
    const Event& start = timed->start;
    const Event& stop = timed->stop;
    const uint32_t seed = 0x48424du + static_cast<uint32_t>(gpu.index);
    const size_t words = bytes / 4;
    TRAINRIG_TRY(fill_pattern(static_cast<uint32_t*>(src->get()), words, seed, st));
    CUDA_TRY(cudaMemsetAsync(dst->get(), 0, bytes, st));
    // Warm-up: the first copy pays for mapping pages and waking the clocks.
    CUDA_TRY(cudaMemcpyAsync(dst->get(), src->get(), bytes, cudaMemcpyDeviceToDevice, st));
    TRAINRIG_TRY(wait_stream(st));

    GpuRecord r;
    r.bench = "hbm";
    r.name = "copy";
    r.unit = "bytes/s";
    r.target = target_json(gpu);
    r.params = {{"size_bytes", bytes},
                {"op", "device_to_device_copy"},
                {"api", "cudaMemcpyAsync"},
                {"copies_per_sample", copies},
                {"counting", "bytes read + bytes written (2 x size per copy)"}};
    const double per_sample = 2.0 * static_cast<double>(bytes) * copies;
    r.counted = {{"bytes_per_copy", 2 * bytes},
                 {"copies_per_sample", copies},
                 {"bytes_per_sample", per_sample}};
    for (int k = 0; k < samples; ++k) {
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        CUDA_TRY(cudaEventRecord(start.get(), st));
        for (int c = 0; c < copies; ++c)
            CUDA_TRY(cudaMemcpyAsync(dst->get(), src->get(), bytes, cudaMemcpyDeviceToDevice, st));
        CUDA_TRY(cudaEventRecord(stop.get(), st));
        auto ms = elapsed_ms(start.get(), stop.get());
        if (!ms.ok()) return ms.status();
        r.samples.push_back(per_sample / (*ms / 1e3));
    }
    auto* count = static_cast<unsigned long long*>(counter->get());
    CUDA_TRY(cudaMemsetAsync(count, 0, sizeof *count, st));
    TRAINRIG_TRY(
        count_pattern_mismatches(static_cast<const uint32_t*>(dst->get()), words, seed, count, st));
    unsigned long long bad = 0;
    CUDA_TRY(cudaMemcpyAsync(&bad, count, sizeof bad, cudaMemcpyDeviceToHost, st));
    TRAINRIG_TRY(wait_stream(st));
    r.verified = bad == 0;
    r.verify_detail =
        bad == 0 ? fmt::format(
                       "destination holds the source pattern in all {} words (checked "
                       "on the GPU)",
                       words)
                 : fmt::format("{} of {} words of the destination differ from the source pattern",
                               bad, words);
    return r;
}

}  // namespace

Status run_hbm_bench(const BenchContext& ctx, Records& out) {
    // Several times the 50-60 MB L2 of an H100/H200, so the copy streams from HBM.
    const size_t bytes = ctx.sized<size_t>(2 * kGiB, kGiB, kGiB / 16);
    const int samples = ctx.repeats_or(ctx.request.quick ? 5 : 10);
    for (const auto& gpu : ctx.gpus) {
        auto r = measure(ctx, gpu, bytes, 20, samples);
        if (!r.ok()) return r.status();
        out.push_back(r->to_json());
    }
    return {};
}

}  // namespace trainrig::cuda

// p2p: GPU-to-GPU copy bandwidth for every ordered pair (both directions of each link), with
// peer access enabled where cudaDeviceCanAccessPeer allows (otherwise the driver stages the copy
// through host memory, and the record says so). nvbandwidth's device_to_device_memcpy cases
// measure the same with cudaMemcpyPeerAsync-style copy-engine copies.
#include <fmt/format.h>

#include "cuda/bench/benchmarks.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"

namespace trainrig::cuda {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Enables access from `dev` to `peer`; true when this call enabled it (and must disable it).
Result<bool> enable_peer(int dev, int peer) {
    CUDA_TRY(cudaSetDevice(dev));
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();  // clear the sticky-free error so later checks don't see it
        return false;
    }
    CUDA_TRY(e);
    return true;
}

Result<GpuRecord> measure_pair(const BenchContext& ctx, const GpuInfo& src, const GpuInfo& dst,
                               size_t bytes, int copies, int samples) {
    int can = 0;
    CUDA_TRY(cudaDeviceCanAccessPeer(&can, src.index, dst.index));
    int can_back = 0;
    CUDA_TRY(cudaDeviceCanAccessPeer(&can_back, dst.index, src.index));
    bool enabled_here = false, enabled_back = false;
    if (can != 0) {
        auto e = enable_peer(src.index, dst.index);
        if (!e.ok()) return e.status();
        enabled_here = *e;
    }
    if (can_back != 0) {
        auto e = enable_peer(dst.index, src.index);
        if (!e.ok()) return e.status();
        enabled_back = *e;
    }
    CUDA_TRY(cudaSetDevice(dst.index));
    auto to = device_alloc(bytes);
    if (!to.ok()) return to.status();
    auto counter = device_alloc(sizeof(unsigned long long));
    if (!counter.ok()) return counter.status();
    CUDA_TRY(cudaSetDevice(src.index));
    auto from = device_alloc(bytes);
    if (!from.ok()) return from.status();
    // The stream lives on the source GPU: its copy engine pushes the data (a "write").
    auto timed = make_timed_stream();
    if (!timed.ok()) return timed.status();
    const cudaStream_t st = timed->get();
    const uint32_t seed = 0x5050u + static_cast<uint32_t>(src.index * 64 + dst.index);
    TRAINRIG_TRY(fill_pattern(static_cast<uint32_t*>(from->get()), bytes / 4, seed, st));
    CUDA_TRY(cudaMemcpyPeerAsync(to->get(), dst.index, from->get(), src.index, bytes, st));
    TRAINRIG_TRY(wait_stream(st));

    GpuRecord r;
    r.bench = "p2p";
    r.name = "copy";
    r.unit = "bytes/s";
    r.target = target_json(std::vector<GpuInfo>{src, dst});
    r.params = {{"src", src.index},           {"dst", dst.index},
                {"size_bytes", bytes},        {"api", "cudaMemcpyPeerAsync"},
                {"stream_on", "src"},         {"peer_access", can != 0},
                {"copies_per_sample", copies}};
    r.counted = {{"bytes_per_copy", bytes},
                 {"copies_per_sample", copies},
                 {"bytes_per_sample", static_cast<double>(bytes) * copies}};
    Status failed;
    for (int k = 0; k < samples && failed.ok(); ++k) {
        if (ctx.cancelled()) {
            failed = interrupted();
            break;
        }
        failed = [&]() -> Status {
            CUDA_TRY(cudaEventRecord(timed->start.get(), st));
            for (int c = 0; c < copies; ++c)
                CUDA_TRY(
                    cudaMemcpyPeerAsync(to->get(), dst.index, from->get(), src.index, bytes, st));
            CUDA_TRY(cudaEventRecord(timed->stop.get(), st));
            auto ms = elapsed_ms(timed->start.get(), timed->stop.get());
            if (!ms.ok()) return ms.status();
            r.samples.push_back(static_cast<double>(bytes) * copies / (*ms / 1e3));
            return {};
        }();
    }
    unsigned long long bad = 0;
    if (failed.ok()) {
        failed = [&]() -> Status {
            CUDA_TRY(cudaSetDevice(dst.index));
            auto* count = static_cast<unsigned long long*>(counter->get());
            CUDA_TRY(cudaMemset(count, 0, sizeof *count));
            TRAINRIG_TRY(count_pattern_mismatches(static_cast<const uint32_t*>(to->get()),
                                                  bytes / 4, seed, count, nullptr));
            CUDA_TRY(cudaMemcpy(&bad, count, sizeof bad, cudaMemcpyDeviceToHost));
            return {};
        }();
    }
    // Leave peer access as it was found, whatever happened above.
    if (enabled_here && cudaSetDevice(src.index) == cudaSuccess)
        (void)cudaDeviceDisablePeerAccess(dst.index);
    if (enabled_back && cudaSetDevice(dst.index) == cudaSuccess)
        (void)cudaDeviceDisablePeerAccess(src.index);
    if (!failed.ok()) return failed;
    r.verified = bad == 0;
    r.verify_detail = bad == 0
                          ? fmt::format("GPU {} received GPU {}'s pattern in all {} words",
                                        dst.index, src.index, bytes / 4)
                          : fmt::format("{} of {} words on GPU {} differ from GPU {}'s pattern",
                                        bad, bytes / 4, dst.index, src.index);
    return r;
}

}  // namespace

Status run_p2p_bench(const BenchContext& ctx, Records& out) {
    if (ctx.gpus.size() < 2)
        return {Errc::kUnsupported, "p2p needs at least 2 GPUs",
                "run it on a machine with several GPUs, or select more with --gpus"};
    const size_t bytes = ctx.sized<size_t>(512, 256, 16) * kMiB;
    const int samples = ctx.repeats_or(ctx.request.quick ? 3 : 5);
    for (const auto& src : ctx.gpus)
        for (const auto& dst : ctx.gpus) {
            if (src.index == dst.index) continue;
            auto r = measure_pair(ctx, src, dst, bytes, 8, samples);
            if (!r.ok()) return r.status();
            out.push_back(r->to_json());
        }
    return {};
}

}  // namespace trainrig::cuda

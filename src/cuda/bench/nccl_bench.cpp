// nccl: all_reduce, all_gather, reduce_scatter, broadcast and alltoall (grouped ncclSend/Recv)
// over a size sweep, with nccl-tests' method and arithmetic (doc/PERFORMANCE.md):
// 5 warm-up operations, then samples of back-to-back operations, the slowest rank's time,
// algbw = S/t and busbw = algbw·factor. Every output is checked against the expected values
// of measure/collective_math.h, on the GPU.
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "cuda/bench/benchmarks.h"
#include "cuda/bench/nccl_world.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/nccl_group.h"
#include "measure/collective_math.h"

namespace trainrig::cuda {
namespace {

using bench::Collective;

constexpr int kWarmup = 5;  // nccl-tests -w default

struct RankBuffers {
    DeviceMemory send, recv, scratch;
    Event start, stop;
};

Status launch(NcclWorld& w, Collective c, const bench::CollectiveCounts& n,
              const std::vector<RankBuffers>& bufs) {
    NcclGroup group;
    NCCL_TRY(group.started());
    for (size_t i = 0; i < w.local().size(); ++i) {
        const NcclRank& r = w.local()[i];
        ncclComm_t comm = w.comm(i);
        const void* s = bufs[i].send.get();
        void* d = bufs[i].recv.get();
        switch (c) {
            case Collective::kAllReduce:
                NCCL_TRY(ncclAllReduce(s, d, n.send_count, ncclFloat, ncclSum, comm, r.stream));
                break;
            case Collective::kAllGather:
                NCCL_TRY(ncclAllGather(s, d, n.send_count, ncclFloat, comm, r.stream));
                break;
            case Collective::kReduceScatter:
                NCCL_TRY(ncclReduceScatter(s, d, n.recv_count, ncclFloat, ncclSum, comm, r.stream));
                break;
            case Collective::kBroadcast:
                NCCL_TRY(ncclBroadcast(s, d, n.send_count, ncclFloat, 0, comm, r.stream));
                break;
            case Collective::kAllToAll:
                // nccl-tests' alltoall: a send and a receive of one block per peer, grouped.
                for (int q = 0; q < w.size(); ++q) {
                    const size_t off = static_cast<size_t>(q) * n.block;
                    NCCL_TRY(ncclSend(static_cast<const float*>(s) + off, n.block, ncclFloat, q,
                                      comm, r.stream));
                    NCCL_TRY(ncclRecv(static_cast<float*>(d) + off, n.block, ncclFloat, q, comm,
                                      r.stream));
                }
                break;
        }
    }
    // Non-blocking communicators: the group is taken once the call settles (nccl_comm.h).
    return w.settle(group.end(), "ncclGroupEnd");
}

// Seconds per operation over `iters` operations, the slowest local rank.
Result<double> time_ops(NcclWorld& w, Collective c, const bench::CollectiveCounts& n,
                        const std::vector<RankBuffers>& bufs, int iters) {
    for (size_t i = 0; i < bufs.size(); ++i)
        CUDA_TRY(cudaEventRecord(bufs[i].start.get(), w.local()[i].stream));
    for (int k = 0; k < iters; ++k) TRAINRIG_TRY(launch(w, c, n, bufs));
    for (size_t i = 0; i < bufs.size(); ++i)
        CUDA_TRY(cudaEventRecord(bufs[i].stop.get(), w.local()[i].stream));
    // The streams first, watching NCCL's errors: then the stop events have completed.
    for (size_t i = 0; i < bufs.size(); ++i) TRAINRIG_TRY(w.wait(i));
    double worst = 0;
    for (const auto& b : bufs) {
        auto ms = elapsed_ms(b.start.get(), b.stop.get());
        if (!ms.ok()) return ms.status();
        worst = std::max(worst, *ms / 1e3 / iters);
    }
    return worst;
}

// Combines per-rank values over all ranks with NCCL (max of times, sum of mismatch counts),
// so rank 0 reports the slowest rank's time and every rank's errors, in any launch mode.
template <class T>
Result<std::vector<T>> reduce_over_ranks(NcclWorld& w, const std::vector<RankBuffers>& bufs,
                                         const std::vector<std::vector<T>>& values,
                                         ncclRedOp_t op) {
    const size_t count = values.front().size();
    const ncclDataType_t type =
        sizeof(T) == 8 && std::is_floating_point_v<T> ? ncclFloat64 : ncclUint64;
    for (size_t i = 0; i < bufs.size(); ++i) {
        CUDA_TRY(cudaSetDevice(w.local()[i].gpu.index));
        // On the collective's own stream: that stream does not wait for the legacy one.
        CUDA_TRY(cudaMemcpyAsync(bufs[i].scratch.get(), values[i].data(), count * sizeof(T),
                                 cudaMemcpyHostToDevice, w.local()[i].stream));
    }
    {
        NcclGroup group;
        NCCL_TRY(group.started());
        for (size_t i = 0; i < bufs.size(); ++i)
            NCCL_TRY(ncclAllReduce(bufs[i].scratch.get(), bufs[i].scratch.get(), count, type, op,
                                   w.comm(i), w.local()[i].stream));
        TRAINRIG_TRY(w.settle(group.end(), "ncclGroupEnd"));
    }
    std::vector<T> out(count);
    CUDA_TRY(cudaSetDevice(w.local()[0].gpu.index));
    TRAINRIG_TRY(w.wait(0));
    CUDA_TRY(
        cudaMemcpy(out.data(), bufs[0].scratch.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < bufs.size(); ++i) TRAINRIG_TRY(w.wait(i));
    return out;
}

Result<std::vector<RankBuffers>> allocate(const NcclWorld& w, const bench::CollectiveCounts& n,
                                          int samples) {
    std::vector<RankBuffers> bufs;
    for (const NcclRank& r : w.local()) {
        CUDA_TRY(cudaSetDevice(r.gpu.index));
        RankBuffers b;
        auto s = device_alloc(n.send_count * sizeof(float));
        auto d = device_alloc(n.recv_count * sizeof(float));
        auto x = device_alloc(std::max<size_t>(static_cast<size_t>(samples), 1) * 8);
        auto e0 = make_event();
        auto e1 = make_event();
        for (const Status* st : {&s.status(), &d.status(), &x.status(), &e0.status(), &e1.status()})
            TRAINRIG_TRY(*st);
        b.send = std::move(s).value();
        b.recv = std::move(d).value();
        b.scratch = std::move(x).value();
        b.start = std::move(e0).value();
        b.stop = std::move(e1).value();
        TRAINRIG_TRY(fill_collective_input(static_cast<float*>(b.send.get()), n.send_count, r.rank,
                                           r.stream));
        // NaN everywhere, so an output NCCL never wrote cannot pass.
        CUDA_TRY(cudaMemsetAsync(b.recv.get(), 0xFF, n.recv_count * sizeof(float), r.stream));
        bufs.push_back(std::move(b));
    }
    return bufs;
}

// Aborts the world's communicators when a measurement leaves early: a collective may still run
// on its buffers (a peer that never came, a wait that timed out), and freeing them under it
// would wait for ever. Declared after the buffers, so it runs before they are freed.
class AbortUnlessFinished {
public:
    explicit AbortUnlessFinished(NcclWorld& w) : w_(w) {}
    ~AbortUnlessFinished() {
        if (!finished_) w_.abort();
    }
    AbortUnlessFinished(const AbortUnlessFinished&) = delete;
    AbortUnlessFinished& operator=(const AbortUnlessFinished&) = delete;
    void finished() { finished_ = true; }

private:
    NcclWorld& w_;
    bool finished_ = false;
};

Result<GpuRecord> measure(const BenchContext& ctx, NcclWorld& w, Collective c, size_t size,
                          int samples) {
    const bench::CollectiveCounts n = bench::collective_counts(c, size, sizeof(float), w.size());
    const size_t s_bytes = bench::collective_size_bytes(n, sizeof(float));
    // nccl-tests -n 20; fewer for the largest sizes, which run long enough on their own.
    const int iters = s_bytes > (size_t{256} << 20) ? 5 : 20;
    auto bufs_r = allocate(w, n, samples);
    if (!bufs_r.ok()) return bufs_r.status();
    const std::vector<RankBuffers> bufs = std::move(bufs_r).value();
    AbortUnlessFinished guard(w);
    for (int k = 0; k < kWarmup; ++k) TRAINRIG_TRY(launch(w, c, n, bufs));
    std::vector<std::vector<double>> times(bufs.size());
    for (int k = 0; k < samples; ++k) {
        // Every rank must run the same number of operations, so no rank stops alone: a
        // cancel is honoured between sizes (the caller checks) in multi-process runs.
        if (!w.multi_process()) TRAINRIG_STOP_IF_CANCELLED(ctx);
        auto t = time_ops(w, c, n, bufs, iters);
        if (!t.ok()) return t.status();
        for (auto& v : times) v.push_back(*t);
    }
    std::vector<std::vector<uint64_t>> bad(bufs.size(), std::vector<uint64_t>(1, 0));
    for (size_t i = 0; i < bufs.size(); ++i) {
        const NcclRank& r = w.local()[i];
        CUDA_TRY(cudaSetDevice(r.gpu.index));
        auto* count = static_cast<unsigned long long*>(bufs[i].scratch.get());
        CUDA_TRY(cudaMemsetAsync(count, 0, sizeof *count, r.stream));
        TRAINRIG_TRY(count_collective_mismatches(static_cast<const float*>(bufs[i].recv.get()),
                                                 n.recv_count, c, w.size(), r.rank, n.block, count,
                                                 r.stream));
        unsigned long long b = 0;
        CUDA_TRY(cudaMemcpyAsync(&b, count, sizeof b, cudaMemcpyDeviceToHost, r.stream));
        TRAINRIG_TRY(w.wait(i));
        bad[i][0] = b;
    }
    auto worst = reduce_over_ranks<double>(w, bufs, times, ncclMax);
    if (!worst.ok()) return worst.status();
    auto wrong = reduce_over_ranks<uint64_t>(w, bufs, bad, ncclSum);
    if (!wrong.ok()) return wrong.status();
    guard.finished();  // every operation on these buffers has completed

    GpuRecord rec;
    rec.bench = "nccl";
    rec.name = std::string(bench::collective_name(c));
    rec.unit = "bytes/s";
    const double factor = bench::bus_factor(c, w.size());
    nlohmann::json algbw = nlohmann::json::array(), time_us = nlohmann::json::array();
    for (const double t : *worst) {
        rec.samples.push_back(bench::busbw(c, w.size(), static_cast<double>(s_bytes), t));
        algbw.push_back(bench::algbw(static_cast<double>(s_bytes), t));
        time_us.push_back(t * 1e6);
    }
    rec.params = {{"op", rec.name},
                  {"size_bytes", s_bytes},
                  {"send_count", n.send_count},
                  {"recv_count", n.recv_count},
                  {"dtype", "float32"},
                  {"redop", "sum"},
                  {"root", 0},
                  {"ranks", w.size()},
                  {"launcher", w.launcher()},
                  {"metric", "busbw"},
                  {"bus_factor", factor},
                  {"warmup", kWarmup},
                  {"ops_per_sample", iters}};
    rec.counted = {
        {"size_bytes", s_bytes}, {"ops_per_sample", iters}, {"algbw", algbw}, {"time_us", time_us}};
    if (w.multi_process()) {
        rec.target = target_json(w.local().front().gpu);
        rec.target["ranks"] = w.size();
    } else {
        std::vector<GpuInfo> gpus;
        for (const auto& r : w.local()) gpus.push_back(r.gpu);
        rec.target = target_json(gpus);
        rec.target["ranks"] = w.size();
    }
    const uint64_t total_bad = (*wrong)[0];
    rec.verified = total_bad == 0;
    rec.verify_detail =
        total_bad == 0
            ? fmt::format("every rank's output ({} floats each) equals the expected values",
                          n.recv_count)
            : fmt::format("{} output floats over {} ranks differ from the expected values",
                          total_bad, w.size());
    return rec;
}

}  // namespace

Status run_nccl_bench(const BenchContext& ctx, Records& out) {
    auto world = NcclWorld::create(ctx.gpus);
    if (!world.ok()) return world.status();
    NcclWorld& w = world.value();
    out.reporting = w.reports();
    const int samples = ctx.repeats_or(ctx.request.quick ? 3 : 5);
    for (const Collective c : bench::all_collectives())
        for (const size_t size : bench::collective_sizes(ctx.sweep())) {
            TRAINRIG_STOP_IF_CANCELLED(ctx);
            auto r = measure(ctx, w, c, size, samples);
            if (!r.ok()) return r.status();
            if (w.reports()) out.push_back(r->to_json());
        }
    return {};
}

}  // namespace trainrig::cuda

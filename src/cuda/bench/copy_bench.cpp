// h2d and d2h: PCIe copy bandwidth per GPU from/to pinned and pageable host memory placed on the
// GPU's NUMA node, then all GPUs at once. Method after nvbandwidth (512 MiB buffers, several
// copies per sample, data checked): cudaMemcpyAsync on one stream timed with CUDA events.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "cuda/bench/benchmarks.h"
#include "cuda/bench/numa_binding.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/pattern.h"

namespace trainrig::cuda {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

struct CopyPlan {
    bool to_device = true;
    size_t bytes = 0;
    int copies_per_sample = 0;
    int samples = 0;
    uint32_t seed = 0;
};

// One GPU's buffers for one direction and kind of host memory.
struct CopySetup {
    GpuInfo gpu;
    bool pinned = true;
    void* host = nullptr;
    PinnedMemory pinned_owner;
    PageableMemory pageable_owner;
    DeviceMemory device;
    DeviceMemory counter;
    Stream stream;
    Event start, stop;
    bool numa_bound = false;
    std::string numa_note;
};

Result<CopySetup> prepare(const BenchContext& ctx, const GpuInfo& gpu, bool pinned,
                          const CopyPlan& plan) {
    CopySetup s;
    s.gpu = gpu;
    s.pinned = pinned;
    CUDA_TRY(cudaSetDevice(gpu.index));
    {
        // Allocated and first touched on the GPU's node; the old CPU set is restored at once.
        NumaBinding bind(ctx.fs, gpu.numa_node);
        s.numa_bound = bind.bound();
        s.numa_note = bind.bound() ? fmt::format("host memory on NUMA node {}", gpu.numa_node)
                                   : "host memory not placed: " + bind.why();
        if (pinned) {
            auto p = pinned_alloc(plan.bytes);
            if (!p.ok()) return p.status();
            s.pinned_owner = std::move(p).value();
            s.host = s.pinned_owner.get();
        } else {
            auto p = pageable_alloc(plan.bytes);
            if (!p.ok()) return p.status();
            s.pageable_owner = std::move(p).value();
            s.host = s.pageable_owner.get();
        }
        // Touch every page (and, for h2d, write the pattern the device must receive).
        auto* words = static_cast<uint32_t*>(s.host);
        const size_t n = plan.bytes / 4;
        if (plan.to_device)
            for (size_t i = 0; i < n; ++i) words[i] = pattern_word(i, plan.seed);
        else
            std::memset(s.host, 0, plan.bytes);
    }
    auto dev = device_alloc(plan.bytes);
    if (!dev.ok()) return dev.status();
    s.device = std::move(dev).value();
    auto counter = device_alloc(sizeof(unsigned long long));
    if (!counter.ok()) return counter.status();
    s.counter = std::move(counter).value();
    auto stream = make_stream();
    if (!stream.ok()) return stream.status();
    s.stream = std::move(stream).value();
    auto a = make_event();
    auto b = make_event();
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    s.start = std::move(a).value();
    s.stop = std::move(b).value();
    if (!plan.to_device)
        TRAINRIG_TRY(fill_pattern(static_cast<uint32_t*>(s.device.get()), plan.bytes / 4, plan.seed,
                                  s.stream.get()));
    TRAINRIG_TRY(wait_stream(s.stream.get()));
    return s;
}

Status queue_copies(const CopySetup& s, const CopyPlan& plan, int copies) {
    void* dst = plan.to_device ? s.device.get() : s.host;
    const void* src = plan.to_device ? s.host : s.device.get();
    const cudaMemcpyKind kind = plan.to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    for (int c = 0; c < copies; ++c)
        CUDA_TRY(cudaMemcpyAsync(dst, src, plan.bytes, kind, s.stream.get()));
    return {};
}

// Did the destination receive the pattern? Counts mismatched 32-bit words.
Result<unsigned long long> count_mismatches(const CopySetup& s, const CopyPlan& plan) {
    const size_t n = plan.bytes / 4;
    if (!plan.to_device) {
        const auto* words = static_cast<const uint32_t*>(s.host);
        unsigned long long bad = 0;
        for (size_t i = 0; i < n; ++i) bad += words[i] != pattern_word(i, plan.seed);
        return bad;
    }
    CUDA_TRY(cudaSetDevice(s.gpu.index));
    CUDA_TRY(cudaMemsetAsync(s.counter.get(), 0, sizeof(unsigned long long), s.stream.get()));
    TRAINRIG_TRY(count_pattern_mismatches(
        static_cast<const uint32_t*>(s.device.get()), n, plan.seed,
        static_cast<unsigned long long*>(s.counter.get()), s.stream.get()));
    unsigned long long bad = 0;
    CUDA_TRY(
        cudaMemcpyAsync(&bad, s.counter.get(), sizeof bad, cudaMemcpyDeviceToHost, s.stream.get()));
    TRAINRIG_TRY(wait_stream(s.stream.get()));
    return bad;
}

void set_verification(GpuRecord& r, unsigned long long bad, const CopyPlan& plan) {
    r.verified = bad == 0;
    r.verify_detail =
        bad == 0 ? fmt::format(
                       "all {} words of the {} buffer hold the pattern written at the "
                       "source",
                       plan.bytes / 4, plan.to_device ? "device" : "host")
                 : fmt::format("{} of {} words differ from the pattern written at the source", bad,
                               plan.bytes / 4);
}

GpuRecord base_record(const BenchContext& ctx, const CopyPlan& plan, const std::string& name) {
    GpuRecord r;
    r.bench = ctx.request.bench;
    r.name = name;
    r.unit = "bytes/s";
    r.params = {{"size_bytes", plan.bytes},
                {"direction", plan.to_device ? "host_to_device" : "device_to_host"},
                {"copies_per_sample", plan.copies_per_sample},
                {"api", "cudaMemcpyAsync"}};
    r.counted = {{"bytes_per_copy", plan.bytes},
                 {"copies_per_sample", plan.copies_per_sample},
                 {"bytes_per_sample", plan.bytes * static_cast<size_t>(plan.copies_per_sample)}};
    return r;
}

// One GPU alone: a warm-up copy, then timed samples of several copies each.
Result<GpuRecord> measure_one(const BenchContext& ctx, const GpuInfo& gpu, bool pinned,
                              const CopyPlan& plan) {
    auto setup = prepare(ctx, gpu, pinned, plan);
    if (!setup.ok()) return setup.status();
    const CopySetup& s = *setup;
    TRAINRIG_TRY(queue_copies(s, plan, 1));
    TRAINRIG_TRY(wait_stream(s.stream.get()));
    GpuRecord r = base_record(ctx, plan, pinned ? "pinned" : "pageable");
    GpuInfo live = gpu;
    for (int k = 0; k < plan.samples; ++k) {
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        CUDA_TRY(cudaEventRecord(s.start.get(), s.stream.get()));
        TRAINRIG_TRY(queue_copies(s, plan, plan.copies_per_sample));
        CUDA_TRY(cudaEventRecord(s.stop.get(), s.stream.get()));
        if (k == 0) {
            // The link trains up under load; read its width and speed while copies run.
            const PcieLink l = read_pcie_link(ctx.fs, gpu.pci_bus_id);
            live.pcie_gen = l.gen;
            live.pcie_width = l.width;
        }
        auto ms = elapsed_ms(s.start.get(), s.stop.get());
        if (!ms.ok()) return ms.status();
        r.samples.push_back(static_cast<double>(plan.bytes) * plan.copies_per_sample / (*ms / 1e3));
    }
    auto bad = count_mismatches(s, plan);
    if (!bad.ok()) return bad.status();
    set_verification(r, *bad, plan);
    r.target = target_json(live);
    r.params["host_memory"] = pinned ? "pinned" : "pageable";
    r.params["numa_bound"] = s.numa_bound;
    r.params["numa_note"] = s.numa_note;
    return r;
}

// All GPUs at once from pinned memory: one host thread per GPU, released together; a sample is
// the bytes all moved over the wall time from the first start to the last finish.
Result<GpuRecord> measure_all(const BenchContext& ctx, const CopyPlan& plan) {
    std::vector<CopySetup> setups;
    for (const auto& g : ctx.gpus) {
        auto s = prepare(ctx, g, true, plan);
        if (!s.ok()) return s.status();
        setups.push_back(std::move(s).value());
    }
    GpuRecord r = base_record(ctx, plan, "pinned_all_gpus");
    using Clock = std::chrono::steady_clock;
    for (int k = -1; k < plan.samples; ++k) {  // k = -1: warm-up, not recorded
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        std::vector<Status> status(setups.size());
        const int copies = k < 0 ? 1 : plan.copies_per_sample;
        const Clock::time_point t0 = Clock::now();
        {
            std::vector<std::jthread> threads;
            for (size_t i = 0; i < setups.size(); ++i)
                threads.emplace_back([&, i] {
                    status[i] = [&]() -> Status {
                        CUDA_TRY(cudaSetDevice(setups[i].gpu.index));
                        TRAINRIG_TRY(queue_copies(setups[i], plan, copies));
                        TRAINRIG_TRY(wait_stream(setups[i].stream.get()));
                        return {};
                    }();
                });
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        for (const auto& st : status) TRAINRIG_TRY(st);
        if (k >= 0)
            r.samples.push_back(static_cast<double>(plan.bytes) * copies *
                                static_cast<double>(setups.size()) / seconds);
    }
    unsigned long long bad = 0;
    bool bound = true;
    for (const auto& s : setups) {
        auto b = count_mismatches(s, plan);
        if (!b.ok()) return b.status();
        bad += *b;
        bound = bound && s.numa_bound;
    }
    set_verification(r, bad, plan);
    r.verify_detail += fmt::format(" (on each of {} GPUs)", setups.size());
    r.target = target_json(ctx.gpus);
    r.params["host_memory"] = "pinned";
    r.params["numa_bound"] = bound;
    r.params["gpus_at_once"] = setups.size();
    r.params["timing"] = "wall clock, first start to last finish";
    r.counted["bytes_per_sample"] =
        plan.bytes * static_cast<size_t>(plan.copies_per_sample) * setups.size();
    return r;
}

}  // namespace

Status run_copy_bench(const BenchContext& ctx, Records& out) {
    CopyPlan plan;
    plan.to_device = ctx.request.bench == "h2d";
    plan.bytes = ctx.sized<size_t>(512, 256, 16) * kMiB;
    plan.copies_per_sample = ctx.request.quick ? 4 : 8;
    plan.samples = ctx.repeats_or(ctx.request.quick ? 5 : 10);
    plan.seed = plan.to_device ? 0x4832u : 0x4432u;
    for (const auto& gpu : ctx.gpus) {
        for (const bool pinned : {true, false}) {
            auto r = measure_one(ctx, gpu, pinned, plan);
            if (!r.ok()) return r.status();
            out.push_back(r->to_json());
        }
    }
    if (ctx.gpus.size() >= 2) {
        auto r = measure_all(ctx, plan);
        if (!r.ok()) return r.status();
        out.push_back(r->to_json());
    }
    return {};
}

}  // namespace trainrig::cuda

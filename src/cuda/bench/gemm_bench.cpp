// gemm: cuBLASLt matrix-multiply throughput per GPU and dtype (bf16, fp16, tf32, fp8 e4m3 from
// compute capability 8.9) over measure/gemm_sweep.h's shapes, on random data (a tensor core draws
// less power on random data than on zeros, and zeros run faster). For each shape
// the heuristic's candidates are timed and the fastest kept, as cuBLASLt's own autotuning
// samples do. Each result is checked against an fp64 CPU reference.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cuda/bench/benchmarks.h"
#include "cuda/bench/gemm_check.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/lt_matmul.h"
#include "measure/bench_record.h"

namespace trainrig::cuda {
namespace {

using bench::GemmDtype;
using bench::GemmShape;

constexpr int kCandidates = 8;           // algorithms asked of the heuristic
constexpr double kSampleSeconds = 0.02;  // one timed batch; launch overhead well below 1 %
constexpr size_t kSpotChecks = 64;

// One GPU's cuBLASLt state, reused across shapes.
struct GemmRig {
    const GpuInfo* gpu = nullptr;
    LtHandle handle;
    Stream stream;
    Event start, stop;
    DeviceMemory workspace;
};

struct Operands {
    DeviceMemory a, b, d;
};

Result<Operands> make_operands(GemmDtype d, const GemmShape& s, cudaStream_t st) {
    const auto m = static_cast<size_t>(s.m), n = static_cast<size_t>(s.n),
               k = static_cast<size_t>(s.k);
    Operands o;
    auto a = device_alloc(k * m * gemm_input_bytes(d));
    if (!a.ok()) return a.status();
    auto b = device_alloc(k * n * gemm_input_bytes(d));
    if (!b.ok()) return b.status();
    auto out = device_alloc(m * n * gemm_output_bytes(d));
    if (!out.ok()) return out.status();
    o.a = std::move(a).value();
    o.b = std::move(b).value();
    o.d = std::move(out).value();
    TRAINRIG_TRY(fill_uniform(o.a.get(), d, k * m, 0xA11CEu, st));
    TRAINRIG_TRY(fill_uniform(o.b.get(), d, k * n, 0xB0Bu, st));
    return o;
}

// Seconds per product for `iters` back-to-back launches.
Result<double> time_batch(const GemmRig& rig, const LtMatmul& mm, const cublasLtMatmulAlgo_t& algo,
                          const Operands& o, int iters) {
    const cudaStream_t st = rig.stream.get();
    CUDA_TRY(cudaEventRecord(rig.start.get(), st));
    for (int i = 0; i < iters; ++i)
        TRAINRIG_TRY(mm.run(rig.handle.get(), algo, o.a.get(), o.b.get(), o.d.get(),
                            rig.workspace.get(), st));
    CUDA_TRY(cudaEventRecord(rig.stop.get(), st));
    auto ms = elapsed_ms(rig.start.get(), rig.stop.get());
    if (!ms.ok()) return ms.status();
    return *ms / 1e3 / iters;
}

// The small shapes, checked in full with the heuristic's first algorithm.
Result<GemmVerdict> check_small_shapes(const GemmRig& rig, GemmDtype d) {
    GemmVerdict all;
    for (const GemmShape& s : bench::gemm_check_shapes()) {
        auto o = make_operands(d, s, rig.stream.get());
        if (!o.ok()) return o.status();
        auto mm = LtMatmul::create(d, s, false);
        if (!mm.ok()) return mm.status();
        auto algos = mm->algorithms(rig.handle.get(), 1);
        if (!algos.ok()) return algos.status();
        TRAINRIG_TRY(mm->run(rig.handle.get(), algos->front(), o->a.get(), o->b.get(), o->d.get(),
                             rig.workspace.get(), rig.stream.get()));
        auto v = check_product(d, s, o->a.get(), o->b.get(), o->d.get(), 0, rig.stream.get());
        if (!v.ok()) return v.status();
        all.check.failed += v->check.failed;
        all.check.checked += v->check.checked;
        all.check.worst_ratio = std::max(all.check.worst_ratio, v->check.worst_ratio);
        all.detail += (all.detail.empty() ? "" : "; ") + v->detail;
    }
    return all;
}

Result<GpuRecord> measure_shape(const BenchContext& ctx, const GemmRig& rig, GemmDtype d,
                                const GemmShape& s, const GemmVerdict& small, int samples) {
    const cudaStream_t st = rig.stream.get();
    auto o = make_operands(d, s, st);
    if (!o.ok()) return o.status();
    auto mm = LtMatmul::create(d, s, false);
    if (!mm.ok()) return mm.status();
    auto algos = mm->algorithms(rig.handle.get(), kCandidates);
    if (!algos.ok()) return algos.status();
    // Warm-up and a first estimate with the heuristic's favourite sizes the timed batches.
    TRAINRIG_TRY(mm->run(rig.handle.get(), algos->front(), o->a.get(), o->b.get(), o->d.get(),
                         rig.workspace.get(), st));
    auto first = time_batch(rig, *mm, algos->front(), *o, 1);
    if (!first.ok()) return first.status();
    const int iters = std::clamp(static_cast<int>(kSampleSeconds / std::max(*first, 1e-7)), 1, 500);
    size_t best = 0;
    double best_s = INFINITY;
    int tried = 0;
    for (size_t i = 0; i < algos->size(); ++i) {
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        const auto& algo = (*algos)[i];
        // A candidate may still refuse these operands at launch; it is then not a candidate.
        if (!mm->run(rig.handle.get(), algo, o->a.get(), o->b.get(), o->d.get(),
                     rig.workspace.get(), st)
                 .ok())
            continue;
        auto t = time_batch(rig, *mm, algo, *o, std::max(1, iters / 4));
        if (!t.ok()) return t.status();
        ++tried;
        if (*t < best_s) {
            best_s = *t;
            best = i;
        }
    }
    const double flops = bench::gemm_flops(s);
    GpuRecord r;
    r.bench = "gemm";
    r.name = std::string(bench::gemm_dtype_name(d));
    r.unit = "FLOP/s";
    r.target = target_json(*rig.gpu);
    r.params = {{"m", s.m},
                {"n", s.n},
                {"k", s.k},
                {"shape", s.kind},
                {"summary", "shape"},
                {"dtype", r.name},
                {"output", gemm_output_name(d)},
                {"accumulate", "fp32"},
                {"layout", "TN"},
                {"algorithms_tried", tried},
                {"best_algorithm_rank", best},
                {"workspace_bytes", kLtWorkspaceBytes}};
    r.counted = {{"flops_per_matmul", flops},
                 {"matmuls_per_sample", iters},
                 {"flops_per_sample", flops * iters}};
    for (int k = 0; k < samples; ++k) {
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        auto t = time_batch(rig, *mm, (*algos)[best], *o, iters);
        if (!t.ok()) return t.status();
        r.samples.push_back(flops / *t);
    }
    auto spot = check_product(d, s, o->a.get(), o->b.get(), o->d.get(), kSpotChecks, st);
    if (!spot.ok()) return spot.status();
    r.verified = spot->check.failed == 0 && small.check.failed == 0;
    r.verify_detail = spot->detail + "; " + small.detail + " (fp64 CPU reference)";
    return r;
}

// "best": the fastest shape's samples; "typical": one median per shape with every dimension
// >= 4096, so its median is the median over those shapes.
void add_summaries(const std::vector<GpuRecord>& shapes, Records& out) {
    if (shapes.empty()) return;
    auto median = [](const GpuRecord& r) { return bench::median_of(r.samples); };
    const auto best =
        std::max_element(shapes.begin(), shapes.end(),
                         [&](const auto& x, const auto& y) { return median(x) < median(y); });
    GpuRecord b = *best;
    b.params["summary"] = "best";
    out.push_back(b.to_json());
    GpuRecord t = shapes.front();
    t.samples.clear();
    t.params = {{"summary", "typical"}, {"dtype", t.name}, {"shapes", nlohmann::json::array()}};
    t.counted = {{"statistic", "one median per shape"}};
    bool verified = true;
    for (const auto& r : shapes) {
        const GemmShape s{r.params["m"].get<int64_t>(), r.params["n"].get<int64_t>(),
                          r.params["k"].get<int64_t>(), ""};
        if (!bench::gemm_shape_is_typical(s)) continue;
        t.samples.push_back(median(r));
        t.params["shapes"].push_back({s.m, s.n, s.k});
        verified = verified && r.verified;
    }
    t.verified = verified;
    t.verify_detail = verified ? "every shape summarised passed its check"
                               : "a shape summarised failed its check (see its record)";
    if (!t.samples.empty()) out.push_back(t.to_json());
}

Status run_gpu(const BenchContext& ctx, const GpuInfo& gpu, Records& out) {
    CUDA_TRY(cudaSetDevice(gpu.index));
    GemmRig rig;
    rig.gpu = &gpu;
    auto h = make_lt_handle();
    auto st = make_stream();
    auto e0 = make_event();
    auto e1 = make_event();
    auto ws = device_alloc(kLtWorkspaceBytes);
    if (!h.ok()) return h.status();
    if (!st.ok()) return st.status();
    if (!e0.ok()) return e0.status();
    if (!e1.ok()) return e1.status();
    if (!ws.ok()) return ws.status();
    rig.handle = std::move(h).value();
    rig.stream = std::move(st).value();
    rig.start = std::move(e0).value();
    rig.stop = std::move(e1).value();
    rig.workspace = std::move(ws).value();
    const int samples = ctx.repeats_or(ctx.request.quick ? 5 : 10);
    // A data type that fails (no fp8 algorithm for a shape, say) does not take the others'
    // records with it: the first failure is returned after every type has had its turn.
    Status first_failure;
    for (const GemmDtype d : bench::gemm_dtypes(gpu.cc_major, gpu.cc_minor)) {
        TRAINRIG_STOP_IF_CANCELLED(ctx);
        const auto failed = [&](const Status& s) {
            if (first_failure.ok())
                first_failure =
                    Status{s.code(), fmt::format("{} on GPU {}: {}", bench::gemm_dtype_name(d),
                                                 gpu.index, s.message())};
        };
        auto small = check_small_shapes(rig, d);
        if (!small.ok()) {
            failed(small.status());
            continue;
        }
        std::vector<GpuRecord> shapes;
        for (const GemmShape& s : bench::gemm_shapes(ctx.sweep())) {
            auto r = measure_shape(ctx, rig, d, s, *small, samples);
            if (!r.ok()) {
                failed(r.status());
                break;
            }
            out.push_back(r->to_json());
            shapes.push_back(std::move(r).value());
        }
        if (!shapes.empty()) add_summaries(shapes, out);
    }
    return first_failure;
}

}  // namespace

Status run_gemm_bench(const BenchContext& ctx, Records& out) {
    for (const auto& gpu : ctx.gpus) TRAINRIG_TRY(run_gpu(ctx, gpu, out));
    return {};
}

}  // namespace trainrig::cuda

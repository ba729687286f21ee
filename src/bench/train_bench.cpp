#include "bench/train_bench.h"

#include <fmt/format.h>
#include <omp.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <filesystem>
#include <optional>

#include "data/shards/shard_writer.h"
#include "measure/expectations.h"
#include "plan/hardware.h"
#include "plan/memory_model.h"
#include "plan/model_catalog.h"
#include "train/backend.h"
#include "train/device_run.h"
#include "train/model_spec_bridge.h"
#include "train/param_layout.h"
#include "train/rng.h"
#include "train/trainer.h"

namespace trainrig::bench {
namespace {

namespace fs = std::filesystem;

// Removes the generated data however the run ends.
struct TempFolder {
    std::string path;
    ~TempFolder() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

Result<std::string> write_tokens(const std::string& dir, const train::ModelConfig& m,
                                 uint64_t tokens) {
    const std::string prefix = dir + "/tokens";
    auto writer = data::make_llmc_writer(prefix, static_cast<size_t>(m.vocab), tokens + 1);
    if (!writer.ok()) return writer.status();
    // A cycle of 64 tokens: the loss must fall from ln(V) as the model learns it, which is
    // the run's check that the numbers were produced by working training.
    train::Rng rng(1);
    std::vector<uint32_t> cycle(64);
    for (uint32_t& id : cycle)
        id = static_cast<uint32_t>(rng.next() % static_cast<uint64_t>(m.vocab));
    std::vector<uint32_t> ids(tokens);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = cycle[i % cycle.size()];
    TRAINRIG_TRY((*writer)->add_document(ids));
    auto files = (*writer)->commit();
    if (!files.ok()) return files.status();
    return files->front();
}

struct Outcome {
    train::TrainSummary summary;
    std::vector<train::StepRecord> timed;
    std::vector<train::StepRecord> all;  // warm-up steps included: the loss curve
    std::string device;                  // the GPU's name on the device backend
    double peak_flops = 0;
    std::string peak_source;
    int rank = 0, world = 1;
};

// One run of the fixed configuration over `host` (and, for cuda, the device world opened on
// it; `alone` keeps a rank of a multi-rank launch to its own GPU).
Result<Outcome> run_once(train::TrainOptions t, const TrainBenchOptions& options,
                         train::Communicator& host, bool alone) {
    Outcome out;
    train::DeviceRun device;
    if (options.backend == "cuda") {
        auto prepared = train::prepare_device_run(t, host, alone);
        if (!prepared.ok()) return prepared.status();
        device = std::move(prepared).value();
        out.device = t.device;
    }
    t.on_step = [&](const train::StepRecord& r) {
        out.all.push_back(r);
        if (r.step > options.warmup_steps) out.timed.push_back(r);
    };
    train::Communicator& comm = device.comm ? *device.comm : host;
    out.peak_flops = t.peak_flops;
    out.peak_source = t.peak_source;
    out.rank = comm.rank();
    out.world = comm.world();
    auto summary = train::run_training(t, comm);
    if (!summary.ok()) return summary.status();
    out.summary = std::move(summary).value();
    return out;
}

// What `plan` predicts for this run on this GPU: bf16 weights with fp32 master weights,
// gradients and AdamW moments (Megatron's 18 bytes per parameter, the backend's layout), no
// ZeRO, no recomputation, fused attention, no dropout (the reference trainer has none).
std::optional<nlohmann::json> plan_estimate(const std::string& model, int batch, int seq,
                                            const std::string& gpu_name) {
    auto spec = plan::find_model(model);
    const plan::HardwareCatalog catalog = plan::builtin_hardware();
    const plan::GpuSpec* gpu = catalog_gpu(gpu_name, catalog);
    if (!spec || !gpu) return std::nullopt;
    spec->dropout = false;
    plan::JobSpec j;
    j.mode = plan::Mode::kPretrain;
    j.convention = plan::Convention::kMegatron;
    j.micro_batch = batch;
    j.seq = seq;
    plan::Machine m;
    m.gpu = *gpu;
    const plan::MemoryBreakdown b =
        plan::memory_per_gpu(*spec, plan::count_params(*spec), j, m, 0, nullptr);
    // The trainer counts its own allocations; CUDA context and NCCL buffers are outside them.
    return nlohmann::json{{"model_states", b.model_states()},
                          {"activations", b.activations},
                          {"logits", b.logits},
                          {"comparable_bytes", b.model_states() + b.activations + b.logits},
                          {"cuda_context", b.cuda_context},
                          {"nccl", b.nccl},
                          {"total", b.total()}};
}

std::vector<BenchRecord> records(const Outcome& o, const TrainBenchOptions& options,
                                 const train::ModelConfig& model) {
    const train::TrainSummary& s = o.summary;
    const int world = o.world;
    const int steps = options.warmup_steps + options.timed_steps;
    const nlohmann::json params = {{"backend", options.backend},
                                   {"model", options.model},
                                   {"seq", options.seq},
                                   {"batch", options.batch},
                                   {"warmup_steps", options.warmup_steps},
                                   {"timed_steps", options.timed_steps},
                                   {"threads", omp_get_max_threads()},
                                   {"ranks", world},
                                   {"params", s.model_params}};
    nlohmann::json target = {{"backend", options.backend}};
    if (!o.device.empty()) {
        target["gpu_name"] = o.device;
        target["gpus"] = world;
    }
    BenchRecord tps;
    tps.bench = "train";
    tps.name = "tokens";
    tps.params = params;
    tps.target = target;
    tps.unit = "tokens/s";
    BenchRecord flops = tps;
    flops.name = "model-flops";
    flops.unit = "FLOP/s";
    BenchRecord step = tps;
    step.name = "step-time";
    step.unit = "s";
    BenchRecord mfu = tps;
    mfu.name = "mfu";
    mfu.unit = "fraction";
    for (const train::StepRecord& r : o.timed) {
        tps.samples.push_back(r.tokens_per_s);
        flops.samples.push_back(r.flops_per_s);
        step.samples.push_back(r.time.total);
        if (r.mfu) mfu.samples.push_back(*r.mfu);
    }
    const nlohmann::json counted = {
        {"tokens_per_step", options.batch * options.seq * world},
        {"flops_per_token", s.flops_per_token},
        {"flops_formula", "PaLM 6N + 12*L*H*Q*T (arXiv:2204.02311 App. B)"},
        {"peak_flops_per_device", o.peak_flops},
        {"peak_source", o.peak_source},
        {"median_phase_s",
         {{"data_wait", s.median_time.data_wait},
          {"forward", s.median_time.forward},
          {"backward", s.median_time.backward},
          {"comm", s.median_time.comm},
          {"optimizer", s.median_time.optimizer}}},
        {"phase_clock", s.phase_clock},
        {"first_loss", s.first_loss},
        {"last_loss", s.last_loss}};
    // The run is its own check: a loss that is finite and falls from about ln(V).
    const bool learned = std::isfinite(s.last_loss) && s.last_loss < s.first_loss;
    // Every step's loss and phases on the step-time record: the report's loss curve and
    // step-time breakdown (docs/report.md).
    nlohmann::json per_step = nlohmann::json::array();
    for (const train::StepRecord& r : o.all)
        per_step.push_back({{"step", r.step},
                            {"timed", r.step > options.warmup_steps},
                            {"loss", r.loss},
                            {"step_s", r.time.total},
                            {"data_wait_s", r.time.data_wait},
                            {"forward_s", r.time.forward},
                            {"backward_s", r.time.backward},
                            {"comm_s", r.time.comm},
                            {"optimizer_s", r.time.optimizer}});
    std::vector<BenchRecord> out = {tps, flops, step};
    if (!mfu.samples.empty()) out.push_back(mfu);  // only where the catalog knows the peak
    for (BenchRecord& r : out) {
        r.counted = counted;
        if (r.name == "step-time") r.counted["steps"] = per_step;
        r.verified = learned;
        r.verify_detail =
            fmt::format("loss {:.3f} -> {:.3f} over {} steps", s.first_loss, s.last_loss, steps);
    }

    // Memory: the trainer's accounting of its buffers, next to the process's peak resident size
    // (CPU) or plan's estimate for the same model and batch (GPU).
    BenchRecord mem = tps;
    mem.name = "peak-memory";
    mem.unit = "bytes";
    mem.samples = {static_cast<double>(s.peak_memory_bytes)};
    mem.verified = learned;
    mem.verify_detail = out.front().verify_detail;
    if (options.backend == "cpu") {
        struct rusage usage {};
        ::getrusage(RUSAGE_SELF, &usage);
        mem.counted = {
            {"accounted_bytes", train::cpu_training_bytes(model, options.batch, options.seq)},
            {"max_rss_bytes", static_cast<uint64_t>(usage.ru_maxrss) * 1024}};
    } else {
        auto estimate = plan_estimate(options.model, options.batch, options.seq, o.device);
        mem.counted = {{"allocated_bytes", s.peak_memory_bytes},
                       {"plan_estimate", estimate ? *estimate : nlohmann::json(nullptr)}};
    }
    out.push_back(mem);
    return out;
}

}  // namespace

Result<std::vector<BenchRecord>> run_train_bench(const TrainBenchOptions& options) {
    auto model = train::find_train_model(options.model);
    if (!model.ok()) return model.status();
    if (options.threads > 0) omp_set_num_threads(options.threads);

    char tmpl[] = "/tmp/trainrig-bench-train-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr)
        return errno_status(errno, "create", "/tmp/trainrig-bench-train-*");
    TempFolder tmp{tmpl};
    // Enough windows that no step repeats data within the run.
    const int steps = options.warmup_steps + options.timed_steps;
    const uint64_t tokens = static_cast<uint64_t>(options.batch) * options.seq * (steps + 1) + 1;
    auto shard = write_tokens(tmp.path, *model, tokens);
    if (!shard.ok()) return shard.status();

    train::TrainOptions t;
    t.data = {*shard};
    t.model = *model;
    t.seq = options.seq;
    t.batch = options.batch;
    t.steps = steps;
    t.opt.warmup = 1;
    t.opt.lr = 3e-3;
    t.backend = options.backend;

    // The CPU run is one process; the GPU run takes every rank of an mpirun/srun launch, one GPU
    // each, and first measures rank 0's GPU alone for the scaling figure.
    std::unique_ptr<train::Communicator> host(new train::LocalCommunicator());
    if (options.backend == "cuda") {
        auto made = train::make_communicator();
        if (!made.ok()) return made.status();
        host = std::move(made).value();
    }
    std::optional<double> single_tps;
    if (host->world() > 1) {
        Status alone;
        if (host->rank() == 0) {
            train::LocalCommunicator local;
            auto one = run_once(t, options, local, true);
            if (one.ok())
                single_tps = one->summary.tokens_per_s;
            else
                alone = one.status();
        }
        TRAINRIG_TRY(host->barrier());
        TRAINRIG_TRY(alone);
    }
    auto all = run_once(t, options, *host, false);
    if (!all.ok()) return all.status();
    auto out = records(*all, options, *model);
    if (single_tps && *single_tps > 0) {
        BenchRecord scaling = out.front();
        scaling.name = "scaling";
        scaling.unit = "fraction";
        const double n = all->world;
        scaling.samples = {all->summary.tokens_per_s / (n * *single_tps)};
        scaling.counted["one_gpu_tokens_per_s"] = *single_tps;
        scaling.counted["all_gpus_tokens_per_s"] = all->summary.tokens_per_s;
        scaling.verify_detail +=
            fmt::format("; scaling = tokens/s of {} GPUs / ({} x one GPU)", all->world, all->world);
        out.push_back(scaling);
    }
    if (all->rank != 0) return std::vector<BenchRecord>{};  // rank 0 reports
    return out;
}

}  // namespace trainrig::bench

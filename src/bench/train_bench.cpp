#include "bench/train_bench.h"

#include <fmt/format.h>
#include <omp.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <filesystem>

#include "data/shards/shard_writer.h"
#include "train/backend.h"
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

}  // namespace

Result<std::vector<BenchRecord>> run_train_bench(const TrainBenchOptions& options) {
    auto model = train::preset_config(options.model);
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
    std::vector<train::StepRecord> timed;
    t.on_step = [&](const train::StepRecord& r) {
        if (r.step > options.warmup_steps) timed.push_back(r);
    };
    train::LocalCommunicator comm;
    auto summary = train::run_training(t, comm);
    if (!summary.ok()) return summary.status();

    const nlohmann::json params = {{"backend", options.backend},
                                   {"model", options.model},
                                   {"seq", options.seq},
                                   {"batch", options.batch},
                                   {"warmup_steps", options.warmup_steps},
                                   {"timed_steps", options.timed_steps},
                                   {"threads", omp_get_max_threads()},
                                   {"params", summary->model_params}};
    const nlohmann::json target = {{"backend", options.backend}};
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
    for (const train::StepRecord& r : timed) {
        tps.samples.push_back(r.tokens_per_s);
        flops.samples.push_back(r.flops_per_s);
        step.samples.push_back(r.time.total);
    }
    const nlohmann::json counted = {
        {"tokens_per_step", options.batch * options.seq},
        {"flops_per_token", summary->flops_per_token},
        {"flops_formula", "PaLM 6N + 12*L*H*Q*T (arXiv:2204.02311 App. B)"},
        {"median_phase_s",
         {{"data_wait", summary->median_time.data_wait},
          {"forward", summary->median_time.forward},
          {"backward", summary->median_time.backward},
          {"comm", summary->median_time.comm},
          {"optimizer", summary->median_time.optimizer}}},
        {"first_loss", summary->first_loss},
        {"last_loss", summary->last_loss}};
    // The run is its own check: a loss that is finite and falls from about ln(V).
    const bool learned =
        std::isfinite(summary->last_loss) && summary->last_loss < summary->first_loss;
    for (BenchRecord* r : {&tps, &flops, &step}) {
        r->counted = counted;
        r->verified = learned;
        r->verify_detail = fmt::format("loss {:.3f} -> {:.3f} over {} steps", summary->first_loss,
                                       summary->last_loss, steps);
    }
    std::vector<BenchRecord> out = {tps, flops, step};

    // Memory: the trainer's accounting of its buffers, next to the process's peak resident size.
    BenchRecord mem = tps;
    mem.name = "peak-memory";
    mem.unit = "bytes";
    mem.samples = {static_cast<double>(summary->peak_memory_bytes)};
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    mem.counted = {
        {"accounted_bytes", train::cpu_training_bytes(*model, options.batch, options.seq)},
        {"max_rss_bytes", static_cast<uint64_t>(usage.ru_maxrss) * 1024}};
    out.push_back(mem);
    return out;
}

}  // namespace trainrig::bench

#include "train/trainer.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/cancel_signals.h"
#include "data/loader/token_corpus.h"
#include "data/loader/window_loader.h"
#include "measure/bench_record.h"
#include "plan/model_catalog.h"
#include "train/backend.h"
#include "train/batch_source.h"
#include "train/checkpoint.h"
#include "train/hf_weights.h"
#include "train/host_memory.h"
#include "train/param_layout.h"
#include "train/rng.h"

namespace trainrig::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string run_settings(const TrainOptions& o, int world) {
    return nlohmann::json{{"seq", o.seq},
                          {"batch", o.batch},
                          {"grad_accum", o.grad_accum},
                          {"world", world},
                          {"steps", o.steps},
                          {"lr", o.opt.lr},
                          {"warmup", o.opt.warmup},
                          {"final_lr_frac", o.opt.final_lr_frac},
                          {"weight_decay", o.opt.weight_decay},
                          {"grad_clip", o.opt.grad_clip},
                          {"beta1", o.opt.beta1},
                          {"beta2", o.opt.beta2},
                          {"eps", o.opt.eps},
                          {"backend", o.backend}}
        .dump();
}

// Mean loss over the first `batches` windows of the validation data (in order, not shuffled),
// split over the ranks: the same tokens every time it runs.
class Evaluator {
public:
    Evaluator(std::shared_ptr<const data::TokenCorpus> corpus, data::LoaderOptions options,
              int batches)
        : corpus_(std::move(corpus)), options_(options), batches_(batches) {}

    Result<double> run(Backend& backend, Communicator& comm) const {
        auto created = data::WindowLoader::create(corpus_, options_);
        if (!created.ok()) return created.status();
        data::WindowLoader& loader = created.value();
        const auto n =
            std::min<uint64_t>(static_cast<uint64_t>(batches_), loader.steps_per_epoch());
        std::vector<uint32_t> rows(loader.batch_tokens());
        Batch b;
        double sum = 0;
        for (uint64_t i = 0; i < n; ++i) {
            loader.next_batch(rows);
            TRAINRIG_TRY(split_windows(rows, static_cast<int>(options_.batch),
                                       static_cast<int>(options_.window), backend.config().vocab,
                                       b));
            auto loss = backend.forward(b.inputs.data(), b.targets.data(), b.B, b.T);
            if (!loss.ok()) return loss.status();
            sum += *loss;
        }
        double mean = sum / static_cast<double>(n);
        TRAINRIG_TRY(comm.all_reduce_sum(&mean, 1));
        return mean / comm.world();
    }

private:
    std::shared_ptr<const data::TokenCorpus> corpus_;
    data::LoaderOptions options_;
    int batches_;
};

// A resumed run keeps the learning-rate schedule it started with: the schedule is a function of
// --steps, --lr, --warmup and --final-lr-frac, and a different value would jump the rate. A
// larger --steps is a longer run only with --extend.
Status same_schedule(const CheckpointState& s, const TrainOptions& o, const std::string& where) {
    const auto run = nlohmann::json::parse(s.run_json, nullptr, false);
    if (run.is_discarded() || !run.is_object()) return ok_status();  // an older checkpoint
    auto differs = [&](const char* key, const char* flag, double now) -> std::optional<Status> {
        if (!run.contains(key) || !run[key].is_number()) return std::nullopt;
        const double then = run[key].get<double>();
        if (then == now) return std::nullopt;
        return Status(Errc::kInvalidInput,
                      fmt::format("{} {:g} differs from the checkpoint's {:g} ({}, step {}): "
                                  "the learning-rate schedule would change mid-run; pass {} {:g}",
                                  flag, now, then, where, s.step, flag, then),
                      std::string(flag) == "--steps"
                          ? "or --extend to continue to the new --steps on a longer schedule"
                          : "");
    };
    if (!(o.extend && o.steps > s.step))
        if (auto bad = differs("steps", "--steps", static_cast<double>(o.steps))) return *bad;
    if (auto bad = differs("lr", "--lr", o.opt.lr)) return *bad;
    if (auto bad = differs("warmup", "--warmup", static_cast<double>(o.opt.warmup))) return *bad;
    if (auto bad = differs("final_lr_frac", "--final-lr-frac", o.opt.final_lr_frac)) return *bad;
    return ok_status();
}

// Rank 0 reads the checkpoint and checks it continues this run; everyone receives it (no
// shared filesystem needed).
Result<std::optional<CheckpointState>> load_for_resume(CheckpointStore* store, Backend& backend,
                                                       Communicator& comm, const TrainOptions& o,
                                                       std::vector<std::string>& skipped) {
    std::optional<CheckpointState> found;
    Status failure;
    if (comm.rank() == 0) {
        auto r = store->load_latest(backend.config(), &skipped);
        if (r.ok())
            found = std::move(r).value();
        else
            failure = r.status();
        if (found) {
            failure = same_schedule(*found, o, store->folder(found->step));
            if (!failure.ok()) found.reset();
        }
    }
    // -1: rank 0 failed; 0: nothing to resume; 1: a checkpoint follows.
    int64_t header[4] = {failure.ok() ? (found ? 1 : 0) : -1, 0, 0, 0};
    std::string loader_json;
    if (found) {
        header[1] = found->step;
        header[2] = static_cast<int64_t>(found->rng_state);
        header[3] = static_cast<int64_t>(found->loader_json.size());
        loader_json = found->loader_json;
    }
    TRAINRIG_TRY(comm.broadcast(header, sizeof header, 0));
    if (header[0] < 0)
        return comm.rank() == 0
                   ? failure
                   : Status(Errc::kInvalidInput, "rank 0 could not read the checkpoint");
    if (header[0] == 0) return std::optional<CheckpointState>();
    if (comm.rank() != 0) {
        found.emplace();
        found->step = header[1];
        found->rng_state = static_cast<uint64_t>(header[2]);
        loader_json.resize(static_cast<size_t>(header[3]));
        found->model = backend.config();
        const size_t n = ParamLayout(found->model).total();
        for (auto* v : {&found->params, &found->adam_m, &found->adam_v}) v->resize(n);
    }
    TRAINRIG_TRY(comm.broadcast(loader_json.data(), loader_json.size(), 0));
    found->loader_json = loader_json;
    for (auto* v : {&found->params, &found->adam_m, &found->adam_v})
        TRAINRIG_TRY(comm.broadcast(v->data(), v->size() * sizeof(float), 0));
    return found;
}

// Every rank learns whether any rank failed, so none waits in a collective for one that left.
Status agree(Communicator& comm, const Status& local, const char* what) {
    double failed = local.ok() ? 0.0 : 1.0;
    TRAINRIG_TRY(comm.all_reduce_sum(&failed, 1));
    if (!local.ok()) return local;
    if (failed > 0)
        return Status(Errc::kInvalidInput, fmt::format("another rank could not {}", what));
    return ok_status();
}

// --init-from: rank 0 reads the Hugging Face weights and every rank receives them (no shared
// filesystem needed); the AdamW moments start at zero, as for any fresh run. A resumed run
// takes its checkpoint instead, which holds the fine-tuned weights.
Status load_pretrained(Backend& backend, Communicator& comm, const TrainOptions& o) {
    CheckpointState s;
    s.model = backend.config();
    const size_t n = ParamLayout(s.model).total();
    Status local;
    if (comm.rank() == 0) {
        auto w = read_hf_weights(o.init_from, s.model);
        if (w.ok())
            s.params = std::move(w).value();
        else
            local = w.status();
    }
    TRAINRIG_TRY(agree(comm, local, "read the --init-from weights"));
    s.params.resize(n);
    TRAINRIG_TRY(comm.broadcast(s.params.data(), n * sizeof(float), 0));
    s.adam_m.assign(n, 0.0f);
    s.adam_v.assign(n, 0.0f);
    return backend.load_state(s);
}

// Data parallelism keeps one model: after the same all-reduced update every rank must hold
// bit-identical weights. Rank 0's digest is compared by everyone; the answer is agreed on.
Result<bool> replicas_identical(Backend& backend, Communicator& comm) {
    auto local = backend.params_digest();
    if (!local.ok()) return local.status();
    const uint64_t digest = *local;
    uint64_t lead = digest;
    TRAINRIG_TRY(comm.broadcast(&lead, sizeof lead, 0));
    double mismatches = lead == digest ? 0.0 : 1.0;
    TRAINRIG_TRY(comm.all_reduce_sum(&mismatches, 1));
    return mismatches == 0;
}

// A test hook, like TRAINRIG_TRAIN_CRASH_IN_SAVE: TRAINRIG_TRAIN_CTRL_C_AT=STEP is a Ctrl-C on the
// validate whose training stage runs this, once STEP steps are done (0: before the first). The
// terminal's SIGINT reaches validate (its stage children have their own process group), which
// then asks the stage to stop with SIGTERM: both are sent here, so every point of the stage can
// be interrupted without a race.
void ctrl_c_point(int64_t steps_done) {
    static const char* at = std::getenv("TRAINRIG_TRAIN_CTRL_C_AT");
    if (at == nullptr || std::to_string(steps_done) != at) return;
    ::kill(::getppid(), SIGINT);
    ::raise(SIGTERM);
}

}  // namespace

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::kCompleted:
            return "completed";
        case StopReason::kStoppedAt:
            return "stopped_at";
        case StopReason::kNothingToDo:
            return "nothing_to_do";
        case StopReason::kNonFinite:
            return "non_finite";
        case StopReason::kInterrupted:
            return "interrupted";
    }
    return "unknown";
}

Status validate_options(const TrainOptions& o) {
    auto bad = [](std::string s, std::string next = {}) {
        return Status(Errc::kInvalidInput, std::move(s), std::move(next));
    };
    TRAINRIG_TRY(validate(o.model));
    TRAINRIG_TRY(validate(o.opt));
    if (o.data.empty()) return bad("--data names no dataset");
    if (o.seq < 1 || o.seq > o.model.max_seq)
        return bad(fmt::format("--seq {} is outside 1..{} (the model's positions)", o.seq,
                               o.model.max_seq));
    if (o.batch < 1) return bad(fmt::format("--batch must be at least 1, not {}", o.batch));
    if (o.grad_accum < 1)
        return bad(fmt::format("--grad-accum must be at least 1, not {}", o.grad_accum));
    if (o.steps < 1) return bad(fmt::format("--steps must be at least 1, not {}", o.steps));
    if (o.opt.warmup > o.steps)
        return bad(
            fmt::format("--warmup {} is more than --steps {}: the learning rate would "
                        "never reach --lr",
                        o.opt.warmup, o.steps));
    if (o.ckpt_every < 0)
        return bad(fmt::format("--ckpt-every must not be negative, not {}", o.ckpt_every));
    if (o.keep < 1) return bad(fmt::format("--keep must be at least 1, not {}", o.keep));
    if (o.val_every < 0)
        return bad(fmt::format("--val-every must not be negative, not {}", o.val_every));
    if (o.val_batches < 1)
        return bad(fmt::format("--val-batches must be at least 1, not {}", o.val_batches));
    if (o.resume && o.ckpt_dir.empty()) return bad("--resume needs --ckpt-dir");
    // A mistyped --ckpt-dir must not quietly start the run over (nor be created).
    if (std::error_code ec; o.resume && !std::filesystem::is_directory(o.ckpt_dir, ec))
        return Status(Errc::kNotFound,
                      fmt::format("--resume: there is no checkpoint folder {}", o.ckpt_dir),
                      "check --ckpt-dir, or leave out --resume to start at step 0");
    if (o.extend && !o.resume) return bad("--extend needs --resume");
    if (o.stop_at < 0) return bad(fmt::format("--stop-at must not be negative, not {}", o.stop_at));
    if (o.backend != "cpu" && o.backend != "cuda")
        return bad(fmt::format("--backend must be cpu or cuda, not '{}'", o.backend));
    return ok_status();
}

Status validate(const TrainOptions& o) {
    TRAINRIG_TRY(validate_options(o));
    if (o.backend == "cuda" && !o.make_backend)
        return Status(Errc::kUnsupported, "the cuda backend is not available here");
    // A device backend checks its own memory when it allocates.
    if (o.backend != "cpu") return ok_status();
    const uint64_t need = cpu_training_bytes(o.model, o.batch, o.seq);
    const auto have = available_memory();
    if (have && need > *have) {
        const uint64_t state = ParamLayout(o.model).total() * sizeof(float) * 4;
        // Smaller batches shrink only the activations: when the state alone does not fit, no
        // --batch or --grad-accum helps, and every rank holds a full replica.
        if (state > *have)
            return Status(
                Errc::kInvalidInput,
                fmt::format("{} needs {} of memory for its weights, gradients and AdamW state "
                            "alone, but only {} is available: no batch fits",
                            o.model.name, gib(state), gib(*have)),
                fmt::format("choose a smaller model or a machine with more memory{}",
                            plan::find_model(o.model.name)
                                ? fmt::format(" (`trainrig plan --model {}` shows what it needs "
                                              "and where it fits)",
                                              o.model.name)
                                : ""));
        return Status(
            Errc::kInvalidInput,
            fmt::format("this run needs {} of memory ({} for weights, gradients and "
                        "AdamW state, {} for the activations of batch {} x {}), but "
                        "only {} is available",
                        gib(need), gib(state), gib(need - state), o.batch, o.seq, gib(*have)),
            "lower --batch and raise --grad-accum to keep the tokens per step, or "
            "shorten --seq");
    }
    return ok_status();
}

namespace {

// How the ranks ended the agreement before a step's last backward.
struct StepAgreement {
    double stop_votes = 0;  // ranks asked to stop (Ctrl-C, SIGTERM)
    double seconds = 0;     // the agreement itself, on the host clock
};

// One training run: the state its phases share, from the device to the summary. Members are
// declared in the order the run creates them, so they are destroyed in the reverse order.
struct TrainingRun {
    TrainingRun(const TrainOptions& options, Communicator& communicator)
        : o(options), comm(communicator), lead(communicator.rank() == 0), rng(options.seed) {
        sum.world = comm.world();
    }

    Status set_up();
    Status open_inputs();
    Status resume();
    bool nothing_left();
    Status prepare_steps();
    Status run_steps();
    Result<bool> run_step(int64_t step);
    Result<double> forward_micro_batches(StepRecord& rec, float scale, Status& data_error);
    Result<StepAgreement> agree_and_reduce(StepRecord& rec, double loss, const Status& data_error,
                                           float scale);
    Result<bool> update_weights(int64_t step, StepRecord& rec);
    Status prefetch(StepRecord& rec);
    Status take_device_phase_times(StepRecord& rec, double agreement_s);
    Status evaluate_if_due(int64_t step, bool last, StepRecord& rec);
    Status checkpoint_if_due(int64_t step, bool last, bool interrupted, StepRecord& rec);
    Status save_checkpoint(int64_t step, StepRecord& rec);
    void record_step(int64_t step, Clock::time_point t0, StepRecord& rec);
    Status finish();
    void summarize(Clock::time_point wall_start);

    const TrainOptions& o;
    Communicator& comm;
    TrainSummary sum;
    const bool lead;
    std::unique_ptr<Backend> backend;
    std::optional<data::WindowLoader> loader;
    std::optional<Evaluator> evaluator;
    std::optional<CheckpointStore> store;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> log{nullptr, &std::fclose};
    Rng rng;  // the run's stream for stochastic layers; GPT-2 here has none
    nlohmann::json resumed_run;
    std::optional<CheckpointWriter> writer;
    std::string last_good;
    std::optional<CancelSignals> cancel;
    std::optional<BatchSource> batches;
    double flops_per_token = 0;
    uint64_t tokens_per_step = 0;
    std::vector<double> step_times, tps;
    std::vector<PhaseTimes> phases;
    data::LoaderState consumed;
    // The next step's first micro-batch, taken and staged on the device while this step's
    // update still runs (consumed only when its step uses it).
    std::optional<Result<Batch>> ahead;
    int64_t until = 0;  // the step the loop ends at: --steps, or --stop-at when sooner
};

// The device, then each rank's data and outputs, then the starting weights.
Status TrainingRun::set_up() {
    // The device comes first: a run that does not fit on it must fail before anything is
    // created on disk.
    if (o.make_backend) {
        auto made = o.make_backend(o.model, o.opt, o.batch, o.seq);
        TRAINRIG_TRY(agree(comm, made.status(), "set up its device"));
        backend = std::move(made).value();
    } else {
        backend = make_cpu_backend(o.model, o.opt);
    }

    // Everything a rank can fail at on its own (its data, rank 0's checkpoint directory and
    // log) comes first; then the ranks agree before the first collective that needs them all.
    TRAINRIG_TRY(agree(comm, open_inputs(), "read its data or open its outputs"));

    TRAINRIG_TRY(backend->init_weights(o.seed));
    sum.model_params = ParamLayout(o.model).model_params();
    if (!o.init_from.empty()) TRAINRIG_TRY(load_pretrained(*backend, comm, o));
    return ok_status();
}

// This rank's training and validation data; on rank 0 also the checkpoint store and the log.
Status TrainingRun::open_inputs() {
    data::LoaderOptions lo;
    lo.batch = static_cast<uint64_t>(o.batch);
    lo.window = static_cast<uint64_t>(o.seq);
    lo.seed = o.seed;
    lo.rank = comm.rank();
    lo.world = comm.world();
    auto corpus = data::TokenCorpus::open(o.data);
    if (!corpus.ok()) return corpus.status();
    auto created = data::WindowLoader::create(*corpus, lo);
    if (!created.ok()) return created.status();
    loader.emplace(std::move(created).value());
    if (!o.val_data.empty()) {
        auto val = data::TokenCorpus::open(o.val_data);
        if (!val.ok()) return val.status();
        data::LoaderOptions vo = lo;
        vo.shuffle = false;
        vo.seed = 0;
        TRAINRIG_TRY(data::WindowLoader::create(*val, vo).status());
        evaluator.emplace(*val, vo, o.val_batches);
    }
    if (lead && !o.ckpt_dir.empty()) {
        auto opened = CheckpointStore::open(o.ckpt_dir, o.keep);
        if (!opened.ok()) return opened.status();
        store.emplace(std::move(opened).value());
    }
    if (lead && !o.log_path.empty()) {
        log.reset(std::fopen(o.log_path.c_str(), "ae"));
        if (!log) return errno_status(errno, "open", o.log_path);
    }
    return ok_status();
}

// --resume: the newest checkpoint's weights, data position and random state, when there is one.
Status TrainingRun::resume() {
    if (!o.resume) return ok_status();
    auto r = load_for_resume(store ? &*store : nullptr, *backend, comm, o, sum.skipped_checkpoints);
    if (!r.ok()) return r.status();
    if (!*r && lead)  // a crash before the first checkpoint: said, then a fresh start
        std::fprintf(stderr,
                     "trainrig train: --resume: %s holds no complete checkpoint yet; starting "
                     "at step 0.\n",
                     o.ckpt_dir.c_str());
    if (*r) {
        CheckpointState& s = *r.value();
        TRAINRIG_TRY(backend->load_state(s));
        auto state = data::LoaderState::from_json(s.loader_json);
        if (!state.ok()) return state.status();
        TRAINRIG_TRY(loader->restore(*state));
        rng.set_state(s.rng_state);
        sum.start_step = s.step;
        sum.resumed_from = store ? store->folder(s.step) : fmt::format("step {}", s.step);
        resumed_run = nlohmann::json::parse(s.run_json, nullptr, false);
    }
    return ok_status();
}

// A run already at --steps (or --stop-at): the summary says so, and where the run stood.
bool TrainingRun::nothing_left() {
    if (sum.start_step >= o.steps || (o.stop_at > 0 && sum.start_step >= o.stop_at)) {
        sum.stop = StopReason::kNothingToDo;
        sum.message = fmt::format(
            "the run is at step {} of {} in {}: nothing left to do{}", sum.start_step, o.steps,
            sum.resumed_from,
            sum.start_step >= o.steps ? " (a larger --steps with --extend continues it)" : "");
        sum.last_checkpoint = sum.resumed_from;
        // Where the run stood when that checkpoint was saved (rank 0 read it).
        if (resumed_run.is_object() && resumed_run.contains("loss")) {
            sum.first_loss = sum.last_loss = resumed_run["loss"].get<double>();
            if (resumed_run.contains("val_loss"))
                sum.first_val_loss = sum.last_val_loss = resumed_run["val_loss"].get<double>();
        }
        return true;
    }
    return false;
}

// What the steps need before the first: the checkpoint writer, the validation loss before any
// update, stop requests caught, and the batches in flight.
Status TrainingRun::prepare_steps() {
    if (store) writer.emplace(*store);
    last_good = sum.resumed_from;

    if (evaluator) {
        auto v = evaluator->run(*backend, comm);
        if (!v.ok()) return v.status();
        sum.first_val_loss = *v;
    }

    cancel.emplace();
    batches.emplace(std::move(*loader), o.batch, o.seq, o.model.vocab);
    flops_per_token = train_flops_per_token(o.model, o.seq);
    sum.flops_per_token = flops_per_token;
    tokens_per_step =
        static_cast<uint64_t>(o.batch) * o.seq * o.grad_accum * static_cast<uint64_t>(comm.world());
    until = o.stop_at > 0 ? std::min(o.steps, o.stop_at) : o.steps;
    return ok_status();
}

// The step loop, with the Ctrl-C test hook before the first step and after each.
Status TrainingRun::run_steps() {
    ctrl_c_point(sum.start_step);
    for (int64_t step = sum.start_step; step < until; ++step) {
        auto more = run_step(step);
        if (!more.ok()) return more.status();
        if (!*more) break;
        ctrl_c_point(step + 1);
    }
    return ok_status();
}

// One update, its evaluation and checkpoint when due, and its record. False: the run stops
// after it (a loss or gradient that is not finite, or a request to stop).
Result<bool> TrainingRun::run_step(int64_t step) {
    const auto t0 = Clock::now();
    StepRecord rec;
    rec.step = step + 1;
    rec.steps = o.steps;
    // Drops what the device timed outside the step (evaluation, a checkpoint's copy).
    TRAINRIG_TRY(backend->take_device_times().status());
    TRAINRIG_TRY(backend->zero_grads());
    Status data_error;
    const float scale = 1.0f / static_cast<float>(o.grad_accum * comm.world());
    auto loss = forward_micro_batches(rec, scale, data_error);
    if (!loss.ok()) return loss.status();
    auto agreed = agree_and_reduce(rec, *loss, data_error, scale);
    if (!agreed.ok()) return agreed.status();
    auto updated = update_weights(step, rec);
    if (!updated.ok()) return updated.status();
    if (!*updated) return false;
    if (step + 1 < until && agreed->stop_votes == 0) TRAINRIG_TRY(prefetch(rec));
    TRAINRIG_TRY(take_device_phase_times(rec, agreed->seconds));
    sum.end_step = step + 1;
    if (step == sum.start_step) sum.first_loss = rec.loss;
    sum.last_loss = rec.loss;

    const bool last = step + 1 == until;
    const bool interrupted = agreed->stop_votes > 0;
    TRAINRIG_TRY(evaluate_if_due(step, last, rec));
    TRAINRIG_TRY(checkpoint_if_due(step, last, interrupted, rec));
    record_step(step, t0, rec);
    if (interrupted) {
        sum.stop = StopReason::kInterrupted;
        sum.message = fmt::format("stopped at step {} on request", step + 1);
        return false;
    }
    return true;
}

// The step's micro-batches up to its last forward, each with its backward but the last, which
// waits for the agreement. A batch that cannot be read ends them in `data_error`. Returns the
// mean loss of those run.
Result<double> TrainingRun::forward_micro_batches(StepRecord& rec, float scale,
                                                  Status& data_error) {
    double loss = 0;
    for (int k = 0; k < o.grad_accum; ++k) {
        auto t = Clock::now();
        Result<Batch> b = ahead ? std::move(*ahead) : batches->next();
        ahead.reset();
        rec.time.data_wait += seconds_since(t);
        if (!b.ok()) {
            data_error = b.status();
            break;
        }
        consumed = b->after;
        t = Clock::now();
        auto micro = backend->forward(b->inputs.data(), b->targets.data(), b->B, b->T);
        if (!micro.ok()) return micro.status();
        loss += *micro / o.grad_accum;
        rec.time.forward += seconds_since(t);
        if (k + 1 == o.grad_accum) break;  // its backward comes after the agreement
        t = Clock::now();
        TRAINRIG_TRY(backend->backward(scale, false));
        rec.time.backward += seconds_since(t);
    }
    return loss;
}

// Every rank learns whether any rank failed or was asked to stop before the last
// backward, which on a device starts the gradient all-reduce: so every rank issues the
// same collectives and none is left waiting in one. Then that backward and the all-reduce.
Result<StepAgreement> TrainingRun::agree_and_reduce(StepRecord& rec, double loss,
                                                    const Status& data_error, float scale) {
    auto t = Clock::now();
    double flags[3] = {loss, data_error.ok() ? 0.0 : 1.0, CancelSignals::flag() ? 1.0 : 0.0};
    TRAINRIG_TRY(comm.all_reduce_sum(flags, 3));
    if (flags[1] > 0)
        return data_error.ok() ? Status(Errc::kInvalidInput, "another rank could not read its data")
                               : data_error;
    const double agreement_s = seconds_since(t);
    rec.time.comm = agreement_s;
    t = Clock::now();
    TRAINRIG_TRY(backend->backward(scale, true));
    rec.time.backward += seconds_since(t);
    t = Clock::now();
    TRAINRIG_TRY(backend->all_reduce_grads(comm));
    rec.time.comm += seconds_since(t);
    rec.loss = flags[0] / comm.world();
    return StepAgreement{flags[2], agreement_s};
}

// The gradient norm, then the update. False, with the weights left as they were, when the loss
// or the norm is not finite.
Result<bool> TrainingRun::update_weights(int64_t step, StepRecord& rec) {
    const auto t = Clock::now();
    auto norm = backend->grad_norm();
    if (!norm.ok()) return norm.status();
    rec.grad_norm = *norm;
    if (!std::isfinite(rec.loss) || !std::isfinite(rec.grad_norm)) {
        sum.stop = StopReason::kNonFinite;
        sum.end_step = step;
        sum.last_loss = rec.loss;
        sum.message = fmt::format("the {} became {} at step {}; the weights were not updated. {}",
                                  std::isfinite(rec.loss) ? "gradient norm" : "loss",
                                  std::isfinite(rec.loss) ? fmt::format("{}", rec.grad_norm)
                                                          : fmt::format("{}", rec.loss),
                                  step + 1,
                                  last_good.empty()
                                      ? "No checkpoint was written before it"
                                      : fmt::format("The last good checkpoint is {}", last_good));
        if (log) std::fprintf(log.get(), "%s\n", step_json(rec).c_str());
        return false;
    }
    rec.lr = learning_rate(o.opt, step, o.steps);
    TRAINRIG_TRY(backend->update(rec.lr, step + 1, rec.grad_norm));
    rec.time.optimizer = seconds_since(t);
    return true;
}

// Takes the next step's first micro-batch and stages it on the device.
Status TrainingRun::prefetch(StepRecord& rec) {
    const auto w = Clock::now();
    ahead = batches->next();
    rec.time.data_wait += seconds_since(w);
    if (ahead->ok())
        TRAINRIG_TRY(backend->stage((*ahead)->inputs.data(), (*ahead)->targets.data(), (*ahead)->B,
                                    (*ahead)->T));
    return ok_status();
}

// A device's calls return before their kernels finish: its own clock places the time.
// The agreement stays on the host clock; the device adds the all-reduce it left exposed.
Status TrainingRun::take_device_phase_times(StepRecord& rec, double agreement_s) {
    auto device_times = backend->take_device_times();
    if (!device_times.ok()) return device_times.status();
    if (const auto& d = *device_times) {
        rec.time.forward = d->forward;
        rec.time.backward = d->backward;
        rec.time.comm = agreement_s + d->comm;
        rec.time.optimizer = d->optimizer;
        sum.phase_clock = "device";
    }
    return ok_status();
}

// The validation loss, after the last step and every --val-every steps.
Status TrainingRun::evaluate_if_due(int64_t step, bool last, StepRecord& rec) {
    if (evaluator && (last || (o.val_every > 0 && (step + 1) % o.val_every == 0))) {
        const auto t = Clock::now();
        auto v = evaluator->run(*backend, comm);
        if (!v.ok()) return v.status();
        rec.val_loss = *v;
        sum.last_val_loss = *v;
        rec.time.eval = seconds_since(t);
    }
    return ok_status();
}

// A checkpoint after the last step, on a request to stop, and every --ckpt-every steps.
Status TrainingRun::checkpoint_if_due(int64_t step, bool last, bool interrupted, StepRecord& rec) {
    if (last || interrupted || (o.ckpt_every > 0 && (step + 1) % o.ckpt_every == 0)) {
        TRAINRIG_TRY(save_checkpoint(step + 1, rec));
        last_good = rec.checkpoint;
    }
    return ok_status();
}

// Copies the state off the model and hands it to the writer; returns the previous save's result.
Status TrainingRun::save_checkpoint(int64_t step, StepRecord& rec) {
    if (!writer) return ok_status();
    const auto t = Clock::now();
    CheckpointState s;
    s.step = step;
    s.model = o.model;
    s.loader_json = consumed.to_json();
    s.rng_state = rng.state();
    s.seed = o.seed;
    // The settings, and where the run stood: a finished run resumed reports its own end.
    auto run = nlohmann::json::parse(run_settings(o, comm.world()));
    run["loss"] = rec.loss;
    if (const auto v = rec.val_loss ? rec.val_loss : sum.last_val_loss) run["val_loss"] = *v;
    s.run_json = run.dump();
    TRAINRIG_TRY(backend->save_state(s));
    const std::string folder = store->folder(step);
    Status previous = writer->submit(std::move(s), nullptr);
    rec.time.checkpoint = seconds_since(t);
    rec.checkpoint = folder;
    return previous;
}

// The step's throughput and memory, kept for the medians (the first step of a process is left
// out when there are others), then logged and passed on by rank 0.
void TrainingRun::record_step(int64_t step, Clock::time_point t0, StepRecord& rec) {
    rec.time.total = seconds_since(t0);
    rec.tokens = tokens_per_step;
    rec.tokens_per_s = static_cast<double>(tokens_per_step) / (rec.time.total - rec.time.eval);
    rec.flops_per_s = rec.tokens_per_s * flops_per_token;
    if (o.peak_flops > 0) rec.mfu = rec.flops_per_s / (o.peak_flops * comm.world());
    rec.memory_bytes = backend->peak_memory_bytes();
    if (step > sum.start_step || until - sum.start_step == 1) {
        step_times.push_back(rec.time.total - rec.time.eval);
        tps.push_back(rec.tokens_per_s);
        phases.push_back(rec.time);
    }
    if (lead) {
        if (log) {
            std::fprintf(log.get(), "%s\n", step_json(rec).c_str());
            std::fflush(log.get());
        }
        if (o.on_step) o.on_step(rec);
    }
}

// Why the run stopped, the replicas checked against each other, and the last save finished.
Status TrainingRun::finish() {
    if (sum.stop == StopReason::kCompleted && sum.end_step < o.steps)
        sum.stop = StopReason::kStoppedAt;
    if (comm.world() > 1) {
        auto same = replicas_identical(*backend, comm);
        if (!same.ok()) return same.status();
        sum.replicas_identical = *same;
        if (!*same)
            return Status(Errc::kInternal,
                          fmt::format("the {} ranks ended with different weights", comm.world()),
                          "report this with the --log files of every rank");
    }
    if (writer) {
        Status s = writer->wait();
        if (!s.ok()) return s;
        sum.last_checkpoint = last_good;
    }
    return ok_status();
}

// The medians over the timed steps, the run's MFU, memory and wall time.
void TrainingRun::summarize(Clock::time_point wall_start) {
    sum.step_s = bench::median_of(step_times);
    sum.tokens_per_s = bench::median_of(tps);
    auto median_phase = [&](double PhaseTimes::*field) {
        std::vector<double> v;
        for (const PhaseTimes& p : phases) v.push_back(p.*field);
        return bench::median_of(v);
    };
    for (double PhaseTimes::*f :
         {&PhaseTimes::data_wait, &PhaseTimes::forward, &PhaseTimes::backward, &PhaseTimes::comm,
          &PhaseTimes::optimizer, &PhaseTimes::checkpoint, &PhaseTimes::eval, &PhaseTimes::total})
        sum.median_time.*f = median_phase(f);
    if (o.peak_flops > 0 && sum.tokens_per_s > 0)
        sum.mfu = sum.tokens_per_s * flops_per_token / (o.peak_flops * comm.world());
    sum.peak_memory_bytes = backend->peak_memory_bytes();
    sum.wall_s = seconds_since(wall_start);
}

}  // namespace

Result<TrainSummary> run_training(const TrainOptions& o, Communicator& comm) {
    const auto wall_start = Clock::now();
    TRAINRIG_TRY(validate(o));
    TrainingRun run(o, comm);
    TRAINRIG_TRY(run.set_up());
    TRAINRIG_TRY(run.resume());
    run.sum.end_step = run.sum.start_step;
    if (run.nothing_left()) return std::move(run.sum);
    TRAINRIG_TRY(run.prepare_steps());
    TRAINRIG_TRY(run.run_steps());
    TRAINRIG_TRY(run.finish());
    run.summarize(wall_start);
    return std::move(run.sum);
}

}  // namespace trainrig::train

// `trainrig train`: the reference GPT-2 training workload (docs/train.md).
#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/cancel_signals.h"
#include "core/text.h"
#include "data/loader/token_corpus.h"
#include "train/batch_probe.h"
#include "train/batch_probe_render.h"
#include "train/communicator.h"
#include "train/device_run.h"
#include "train/model_spec_bridge.h"
#include "train/render_summary.h"
#include "train/trainer.h"

namespace trainrig {
namespace {

class TrainCommand : public Command {
public:
    const char* name() const override { return "train"; }
    const char* summary() const override {
        return "Train a GPT-2 or Llama-family model on token shards: phase timing, MFU, "
               "checkpoints";
    }

    void declare(CLI::App& app) override {
        // A setting given twice takes its last value, so scripts can append overrides.
        app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        app.add_option("--data", o_.data, "Training tokens: Megatron prefixes or llm.c shards")
            ->expected(1, -1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
            ->type_name("PREFIX");
        app.add_option("--val-data", o_.val_data, "Validation tokens, read in order")
            ->expected(1, -1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
            ->type_name("PREFIX");
        app.add_option("--model", model_,
                       "tiny, gpt2…gpt2-xl, llama-tiny, or a plan catalog model such as "
                       "llama3-8b (default tiny)");
        app.add_option("--init-from", o_.init_from,
                       "Start from a Hugging Face checkpoint (model.safetensors, or a folder "
                       "with its index) of the --model-config model, to fine-tune it")
            ->check(existing_input())
            ->type_name("PATH");
        app.add_option("--model-config", model_config_,
                       "A Hugging Face config.json (gpt2, llama, mistral, qwen2), read as plan "
                       "reads it")
            ->check(existing_input())
            ->type_name("FILE");
        app.add_option("--layers", layers_, "Custom shape: transformer blocks")
            ->check(CLI::PositiveNumber);
        app.add_option("--heads", heads_, "Custom shape: attention heads")
            ->check(CLI::PositiveNumber);
        app.add_option("--dim,--hidden", dim_, "Custom shape: channels (plan's --hidden)")
            ->check(CLI::PositiveNumber);
        app.add_option("--vocab", vocab_, "Vocabulary size (default 50257, GPT-2's)")
            ->check(CLI::Range(2, 1 << 24));
        app.add_option("--seq", o_.seq, "Sequence length T (default 1024)");
        app.add_option("--batch,--micro-batch", o_.batch,
                       "Sequences per rank per micro-step B (default 4; plan's --micro-batch)");
        app.add_option("--grad-accum", o_.grad_accum, "Micro-steps per update (default 1)");
        app.add_option("--steps", o_.steps,
                       "Total optimizer steps, counting those before a resume");
        app.add_option(
            "--stop-at", o_.stop_at,
            "Stop after this step with a checkpoint; the schedule still follows --steps");
        app.add_option("--lr", o_.opt.lr, "Peak learning rate (default 6e-4)");
        app.add_option("--warmup", o_.opt.warmup, "Linear warm-up steps (default 0)");
        app.add_option("--final-lr-frac", o_.opt.final_lr_frac,
                       "The cosine decays to lr x this at the last step (default 0.1)");
        app.add_option("--weight-decay", o_.opt.weight_decay,
                       "AdamW weight decay on matrices (default 0.1)");
        app.add_option("--grad-clip", o_.opt.grad_clip,
                       "Clip the global gradient norm to this (default 1; 0 = off)");
        app.add_option("--seed", o_.seed, "Initialisation and data-order seed (default 1337)");
        app.add_option("--backend", o_.backend, "cpu (default) or cuda")
            ->check(CLI::IsMember({"cpu", "cuda"}));
        app.add_option("--threads", threads_, "CPU backend threads (default: all cores)")
            ->check(CLI::Range(1, 4096));
        app.add_option("--ckpt-dir", o_.ckpt_dir, "Checkpoint directory")->type_name("DIR");
        app.add_option("--ckpt-every", o_.ckpt_every,
                       "Save every N steps (default: at the end only)");
        app.add_option("--keep", o_.keep, "Checkpoints kept (default 2)");
        app.add_flag("--resume", o_.resume,
                     "Continue from the newest complete checkpoint in --ckpt-dir, on the "
                     "checkpoint's schedule (--steps, --lr, --warmup, --final-lr-frac)");
        app.add_flag("--extend", o_.extend,
                     "With --resume: a larger --steps continues the run on the longer schedule");
        app.add_option("--val-every", o_.val_every,
                       "Evaluate every N steps (default: start and end)");
        app.add_option("--val-batches", o_.val_batches, "Batches per evaluation (default 8)");
        app.add_option("--log", o_.log_path, "Append one JSON object per step to FILE")
            ->type_name("FILE");
        app.add_flag("--no-progress", no_progress_, "No live status line on a terminal");
        declare_find_batch(app);
        declare_json_option(app, json_, "trainrig.train.summary");
        declare_output_options(app, output_);
        declare_verbose_option(app, verbose_,
                               "every step's line (loss, lr, tokens/s, MFU) on stderr, "
                               "terminal or not");
        declare_help_footer(
            app,
            {"trainrig train --data tok/train --model tiny --seq 256 --batch 8 --steps 200 "
             "--ckpt-dir ckpt --log train.jsonl",
             "trainrig train --data tok/train --model tiny --seq 256 --batch 8 --steps 200 "
             "--ckpt-dir ckpt --resume   # after a crash",
             "mpirun -np 2 trainrig train --data tok/train --steps 200 --threads 1 --ckpt-dir "
             "ckpt-dp",
             "trainrig train --find-batch --model gpt2 --seq 1024 --mem-limit 8G   # the "
             "largest micro-batch that fits"},
            "The data comes from `trainrig data tokenize`; docs/train.md.\n"
            "Exit codes: 0 trained to --steps, 1 stopped early (loss or gradient not finite), "
            "2 could not run, 130 (143) stopped by Ctrl-C (SIGTERM) after writing a "
            "checkpoint. With --find-batch: 0 a micro-batch fits, 1 nothing fits, 2 could not "
            "run.");
    }

    int check(const GlobalOptions&) override {
        if (Status s = resolve_model(); !s.ok()) return print_error("train", s);
        if (find_batch_) {
            if (mem_limit_opt_->count() > 0 && mem_limit_ == 0)
                return print_error("train", invalid_input("--mem-limit must be more than 0"));
            if (Status s = train::validate_probe(probe_options()); !s.ok())
                return print_error("train", s);
            return 0;
        }
        if (Status s = train::validate_options(o_); !s.ok()) return print_error("train", s);
        for (const auto* data : {&o_.data, &o_.val_data})
            if (!data->empty())
                if (auto corpus = data::TokenCorpus::open(*data); !corpus.ok())
                    return print_error(
                        "train", {corpus.status().code(),
                                  fmt::format("{}: {}", data == &o_.data ? "--data" : "--val-data",
                                              corpus.status().message())});
        return 0;
    }

    int run(const GlobalOptions&) override {
        if (find_batch_) return run_find_batch();
        if (threads_ > 0) omp_set_num_threads(threads_);
        auto comm = train::make_communicator();
        if (!comm.ok()) return print_error("train", comm.status());
        train::DeviceRun device;
        if (o_.backend == "cuda") {
            auto prepared = train::prepare_device_run(o_, **comm);
            if (!prepared.ok()) return print_error("train", prepared.status());
            device = std::move(prepared).value();
        } else if (!train::launched_by_mpi() && train::torchrun_world_size() > 1) {
            return print_error("train", Status(Errc::kUnsupported,
                                               "WORLD_SIZE is set, but the cpu backend runs "
                                               "data-parallel only under mpirun or srun",
                                               "launch with mpirun -np N"));
        }
        train::Communicator& c = device.comm ? *device.comm : **comm;
        const bool show =
            c.rank() == 0 && !json_ && !no_progress_ && !verbose_ && ::isatty(STDERR_FILENO);
        if (verbose_ && c.rank() == 0) {
            o_.on_step = [](const train::StepRecord& r) {
                std::fprintf(stderr, "%s\n", train::status_line(r).c_str());
            };
        } else if (show) {
            o_.on_step = [](const train::StepRecord& r) {
                std::fprintf(stderr, "\r\033[K%s", train::status_line(r).c_str());
                std::fflush(stderr);
            };
        }
        auto result = train::run_training(o_, c);
        if (show) std::fprintf(stderr, "\n");
        if (!result.ok()) return print_error("train", result.status());
        if (c.rank() != 0) return exit_code(*result);
        std::string text = json_ ? train::summary_json(o_, *result, c.name())
                                 : train::summary_text(o_, *result, c.name());
        if (json_) {  // the envelope every command's JSON has (docs/cli.md)
            auto doc = nlohmann::ordered_json::parse(text);
            doc["command"] = name();
            doc["exit_code"] = exit_code(*result);
            text = doc.dump(2) + "\n";
        }
        if (auto s = write_output(output_, text); !s.ok()) return print_error("train", s);
        if (result->stop == train::StopReason::kNonFinite)
            std::fprintf(stderr, "trainrig train: %s.\n", result->message.c_str());
        return exit_code(*result);
    }

private:
    // --find-batch and its options (docs/train.md, "Finding the micro-batch"). Training needs
    // --data and --steps, the probe neither: it takes the training command line as it is and
    // says which of its options it leaves aside. CLI11 cannot say "required unless", so the
    // check runs once the line is parsed, in its words.
    void declare_find_batch(CLI::App& app) {
        auto* fb = app.add_flag("--find-batch", find_batch_,
                                "Find the largest micro-batch that trains here (real steps on "
                                "synthetic tokens) instead of training");
        mem_limit_opt_ =
            app.add_option("--mem-limit", mem_limit_,
                           "--find-batch: bytes the trials may use, e.g. 3G (default: MemAvailable "
                           "on the CPU, the free memory of a GPU)")
                ->transform(CLI::AsSizeValue(false))
                ->needs(fb);
        app.add_option("--headroom", headroom_pct_,
                       "--find-batch: percent of the limit kept free (default 10)")
            ->check(CLI::Range(0.0, 90.0))
            ->needs(fb);
        app.add_option("--max-batch", max_batch_, "--find-batch: largest size tried (default 1024)")
            ->check(CLI::Range(1, 1 << 20))
            ->needs(fb);
        app.add_option("--probe-steps", probe_steps_,
                       "--find-batch: steps per size, the first not timed (default 3)")
            ->check(CLI::Range(1, 100))
            ->needs(fb);
        app.add_option("--trial-timeout", trial_timeout_s_,
                       "--find-batch: seconds a size's trial may go without progress before it "
                       "is killed as not finished (default 300 on a GPU, none on the CPU)")
            ->check(CLI::Range(0.1, 86400.0))
            ->needs(fb);
        app.callback([this, &app] {
            if (find_batch_) {
                for (const char* name :
                     {"--data", "--val-data", "--steps", "--stop-at", "--batch", "--grad-accum",
                      "--init-from", "--ckpt-dir", "--ckpt-every", "--keep", "--resume", "--extend",
                      "--val-every", "--val-batches", "--log"})
                    if (app.get_option(name)->count() > 0) left_aside_.push_back(name);
                return;
            }
            for (const char* name : {"--data", "--steps"})
                if (app.get_option(name)->count() == 0) throw CLI::RequiredError(name);
        });
    }

    train::ProbeOptions probe_options() const {
        train::ProbeOptions p;
        p.trial.model = o_.model;
        p.trial.seq = o_.seq;
        p.trial.seed = o_.seed;
        p.trial.opt = o_.opt;
        p.trial.steps = probe_steps_;
        p.backend = o_.backend;
        p.mem_limit = mem_limit_;
        p.headroom = headroom_pct_ / 100;
        p.max_batch = max_batch_;
        p.trial_timeout = std::chrono::milliseconds(static_cast<int64_t>(trial_timeout_s_ * 1e3));
        return p;
    }

    // The probe runs alone (no MPI, no NCCL): one device, opened only by child processes (the
    // one describing it, then each size's trial), never by this one.
    int run_find_batch() {
        if (!left_aside_.empty())
            fmt::print(stderr,
                       "train --find-batch: leaving aside {} (the probe trains on synthetic "
                       "tokens and finds --batch itself)\n",
                       join(left_aside_, ", "));
        if (threads_ > 0) omp_set_num_threads(threads_);
        train::ProbeOptions p = probe_options();
        if (o_.backend != "cpu") {
            auto device = train::describe_device_in_child(train::describe_lone_device,
                                                          train::probe_trial_timeout(p));
            if (!device.ok()) return print_error("train", device.status());
            p.make_backend = train::make_lone_device_backend;
            p.device = device->name;
            p.device_free_bytes = device->free_bytes;
        }
        if (!no_progress_ && !json_ && (verbose_ || ::isatty(STDERR_FILENO)))
            p.on_size = [](const train::SizeTried& s) {
                std::fprintf(stderr, "%s\n", train::probe_progress_line(s).c_str());
            };
        auto report = train::run_batch_probe(p);
        if (!report.ok()) return print_error("train", report.status());
        // Stopped by Ctrl-C or SIGTERM: 128 + N, as main() exits, so the envelope says it.
        const int rc =
            report->interrupted ? 128 + CancelSignals::received() : train::probe_exit_code(*report);
        const std::string text = json_ ? json_result(train::probe_json(*report), "train", rc)
                                       : train::probe_text(*report);
        if (auto s = write_output(output_, text); !s.ok()) return print_error("train", s);
        if (rc == 2 && !report->interrupted)
            std::fprintf(stderr, "trainrig train: the micro-batch search stopped at %s.\n",
                         report->search.error.c_str());
        return rc;
    }

    static int exit_code(const train::TrainSummary& s) {
        if (s.stop == train::StopReason::kInterrupted)
            return 128 + (CancelSignals::received() != 0 ? CancelSignals::received() : SIGINT);
        return s.stop == train::StopReason::kNonFinite ? 1 : 0;
    }

    Status resolve_model() {
        const bool custom = layers_ || heads_ || dim_;
        if (custom && !model_.empty())
            return Status(Errc::kInvalidInput,
                          "--model and --layers/--heads/--dim are alternatives",
                          "give one or the other");
        if (!model_config_.empty() && (custom || !model_.empty()))
            return Status(Errc::kInvalidInput,
                          "--model-config and --model or --layers/--heads/--dim are alternatives",
                          "give one of them");
        if (custom) {
            if (!layers_ || !heads_ || !dim_)
                return Status(Errc::kInvalidInput,
                              "a custom model needs all of --layers, --heads and --dim");
            auto base = train::preset_config("gpt2");
            o_.model = *base;
            o_.model.name = "custom";
            o_.model.layers = layers_;
            o_.model.heads = heads_;
            o_.model.channels = dim_;
        } else if (!model_config_.empty()) {
            auto c = train::config_from_hf_file(model_config_);
            if (!c.ok()) return c.status();
            o_.model = *c;
        } else {
            auto p = train::find_train_model(model_.empty() ? "tiny" : model_);
            if (!p.ok()) return p.status();
            o_.model = *p;
        }
        if (vocab_) {
            o_.model.vocab = vocab_;
            o_.model.padded_vocab = train::pad_vocab(vocab_);
        }
        return ok_status();
    }

    train::TrainOptions o_;
    std::string model_, model_config_;
    int layers_ = 0, heads_ = 0, dim_ = 0, vocab_ = 0, threads_ = 0;
    bool json_ = false, no_progress_ = false, verbose_ = false;
    bool find_batch_ = false;
    std::vector<std::string> left_aside_;  // training options given with --find-batch
    uint64_t mem_limit_ = 0;
    CLI::Option* mem_limit_opt_ = nullptr;
    double headroom_pct_ = 10;
    int max_batch_ = 1024, probe_steps_ = 3;
    double trial_timeout_s_ = 0;
    OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> make_train_command() { return std::make_unique<TrainCommand>(); }

}  // namespace trainrig

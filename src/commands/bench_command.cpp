// `trainrig bench list|run`: measured baselines with a verdict against what the hardware should
// reach (docs/METHODOLOGY.md), as a table or trainrig.bench JSON (docs/formats.md).
#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "bench/bench_runner.h"
#include "bench/benchmark.h"
#include "bench/gpu_plugin.h"
#include "bench/machine_facts.h"
#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/cancel_signals.h"
#include "core/gpu_selection.h"
#include "data/loader/token_corpus.h"
#include "data/tokenizer/open_tokenizer.h"
#include "measure/baseline.h"
#include "measure/bench_document.h"
#include "measure/expectations.h"

namespace trainrig {
namespace {

// This process's parent as it started (before main), for --keep-partial's parent-death check.
const pid_t kParentAtStart = ::getppid();

class BenchCommand : public Command {
public:
    const char* name() const override { return "bench"; }
    const char* summary() const override {
        return "Measure the machine (memory, storage, GPU copies, GEMM, NCCL) against what its "
               "hardware should reach";
    }

    void declare(CLI::App& app) override {
        app.require_subcommand(1);
        list_ = app.add_subcommand("list", "Show every benchmark and whether it can run here");
        declare_json_option(*list_, json_, "trainrig.bench.list");
        declare_output_options(*list_, output_);
        declare_verbose_option(*list_, verbose_,
                               "the machine facts expectations are chosen by (CPU model, "
                               "virtualisation, memory, GPUs)");
        declare_help_footer(*list_, {"trainrig bench list", "trainrig bench list -v --json"});

        run_ = app.add_subcommand("run", "Run benchmarks by name (or `all`)");
        run_->add_option("names", names_, "Benchmarks to run (see `trainrig bench list`)")
            ->required()
            ->expected(1, -1);
        run_->add_flag("--quick", o_.quick, "Smaller sizes and fewer repeats");
        declare_json_option(*run_, json_, "trainrig.bench");
        declare_output_options(*run_, output_);
        declare_verbose_option(*run_, verbose_, "every timed sample of each measurement");
        declare_help_footer(
            *run_,
            {"trainrig bench run cpu-mem storage --data-dir /data   # median, expected, ratio",
             "trainrig bench run all --data-dir /data --json -o golden.json",
             "trainrig bench run all --data-dir /data --baseline golden.json",
             "trainrig bench run gpu-gemm --gpus 0,1 -v"},
            "A benchmark named on the command line that cannot run here exits 2; `all` runs "
            "what can and lists the rest as skipped. Method: docs/METHODOLOGY.md.");
        run_->add_option("--repeats", o_.repeats,
                         "Timed repeats per measurement (default: per "
                         "benchmark)")
            ->check(CLI::Range(1, 1000))
            ->envname("TRAINRIG_BENCH_REPEATS");
        run_->add_flag("--keep-partial", keep_partial_,
                       "On Ctrl-C or SIGTERM, still print what was measured until then (the JSON "
                       "says \"interrupted\": true), then exit 130 or 143; stop the same way "
                       "when the process that started it dies (validate's stages)");
        run_->add_option("--pass-ratio", thresholds_.pass,
                         "Pass at or above this fraction of the expected value (default 0.9)");
        run_->add_option("--warn-ratio", thresholds_.warn,
                         "Warn at or above this fraction, fail below (default 0.75)");
        run_->add_option("--baseline", baseline_,
                         "A trainrig.bench JSON whose medians become the expected values")
            ->check(CLI::ExistingFile)
            ->type_name("FILE");

        auto* host = run_->add_option_group("host", "cpu-mem and storage");
        host->add_option("--threads", o_.threads,
                         "cpu-mem threads, spread over the cores "
                         "(default: one per core)")
            ->check(CLI::Range(1, 65536));
        host->add_option("--array-bytes", o_.array_bytes,
                         "cpu-mem: bytes per array, e.g. 2G (default: 4x the last-level cache, at "
                         "least 256M, at most an eighth of the memory for all three)")
            ->transform(CLI::AsSizeValue(false))
            ->envname("TRAINRIG_BENCH_ARRAY_BYTES");
        // No TRAINRIG_DATA_DIR: that twin names a folder of the machine doctor judges (inside
        // --root's tree), this one a folder of this host's own disk (docs/cli.md).
        host->add_option("--data-dir", o_.data_dir, "storage: a directory on the disk to measure")
            ->check(CLI::ExistingDirectory)
            ->type_name("DIR");
        host->add_option("--file-size", o_.file_bytes,
                         "storage: test file size, e.g. 8G (default 4G, --quick 1G)")
            ->transform(CLI::AsSizeValue(false))
            ->envname("TRAINRIG_BENCH_FILE_SIZE");
        host->add_option("--io-engine", o_.io_engine, "storage: auto, io_uring or threads")
            ->check(CLI::IsMember({"auto", "io_uring", "threads"}));
        host->add_option("--seq-depth", o_.seq_depth, "storage: 1 MiB reads in flight (default 8)")
            ->check(CLI::Range(1, 4096));
        host->add_option("--rand-depth", o_.rand_depth,
                         "storage: 4 KiB reads in flight (default 32)")
            ->check(CLI::Range(1, 4096));
        host->add_option("--seconds", o_.seconds,
                         "storage: seconds per sample (default 5); burn: run length (default 30)")
            ->check(CLI::Range(0.1, 86400.0))
            ->envname("TRAINRIG_BENCH_SECONDS");

        auto* gpu = run_->add_option_group("gpu", "GPU benchmarks");
        declare_gpu_selection(*gpu, o_.gpus);

        auto* data = run_->add_option_group("data", "tokenizer and loader");
        declare_data_path_inputs(*data, o_.tokenizer, o_.inputs, o_.shards);
        data->add_option("--tokenizer-threads", o_.tokenizer_threads,
                         "tokenizer: thread counts to measure (default 1)")
            ->delimiter(',')
            ->check(CLI::Range(1, 1024));
        data->add_option("--batch", o_.batch, "loader: windows per batch (default 8)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
        data->add_option("--window", o_.window, "loader: tokens per window (default 1024)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
        data->add_option("--steps", o_.steps, "loader: batches per timed run (default 200)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
        auto* train = run_->add_option_group("train", "the reference GPT-2 training run");
        train->add_option("--train-backend", o_.train_backend, "train: cpu (default) or cuda")
            ->check(CLI::IsMember({"cpu", "cuda"}));
        train->add_option("--train-model", o_.train_model,
                          "train: tiny (default), gpt2, gpt2-medium, gpt2-large or gpt2-xl");
        train->add_option("--train-seq", o_.train_seq, "train: sequence length (default 256)")
            ->check(CLI::Range(1, 1024))
            ->envname("TRAINRIG_BENCH_TRAIN_SEQ");
        train->add_option("--train-batch", o_.train_batch, "train: sequences per step (default 4)")
            ->check(CLI::Range(1, 65536))
            ->envname("TRAINRIG_BENCH_TRAIN_BATCH");
    }

    int check(const GlobalOptions& global) override {
        if (list_->parsed()) return 0;
        const char* command = global.command.c_str();
        if (auto s = bench::validate_thresholds(thresholds_); !s.ok())
            return print_error(command, s);
        const auto benchmarks = bench::make_benchmarks();
        for (const auto& n : names_) {
            bool found = n == "all";
            for (const auto& b : benchmarks) found = found || n == b->id();
            if (!found) {
                std::string known;
                for (const auto& b : benchmarks)
                    known += std::string(known.empty() ? "" : ", ") + b->id();
                return print_error(command, {Errc::kInvalidInput,
                                             fmt::format("no benchmark named `{}`; there are {} "
                                                         "(or all)",
                                                         n, known)});
            }
        }
        if (o_.tokenizer.empty() != o_.inputs.empty())
            return print_error(command, {Errc::kInvalidInput,
                                         "--tokenizer and --input go together: the tokenizer "
                                         "benchmark encodes the --input text with --tokenizer"});
        if (!o_.tokenizer.empty())
            if (auto s = data::check_tokenizer_spec(o_.tokenizer); !s.ok())
                return print_error(command, s);
        if (!o_.shards.empty())
            if (auto corpus = data::TokenCorpus::open(o_.shards); !corpus.ok())
                return print_error(
                    command, {corpus.status().code(), "--shards: " + corpus.status().message()});
        if (!baseline_.empty()) {
            auto b = bench::load_baseline(baseline_);
            if (!b) return print_error(command, b.status());
            baseline_read_ = std::move(b).value();
        }
        return 0;
    }

    int run(const GlobalOptions&) override {
        auto benchmarks = bench::make_benchmarks();
        bench::BenchContext ctx;
        ctx.options = o_;
        if (list_->parsed()) return list(benchmarks, ctx);
        std::vector<bench::Benchmark*> chosen;
        for (const auto& n : names_)
            for (const auto& b : benchmarks)
                if ((n == "all" || n == b->id()) &&
                    std::find(chosen.begin(), chosen.end(), b.get()) == chosen.end())
                    chosen.push_back(b.get());
        // --gpus names GPUs this machine shows, whether or not a GPU benchmark was asked for.
        if (!o_.gpus.empty())
            if (auto s = check_gpu_selection(o_.gpus, bench::gpu_devices().size()); !s.ok())
                return print_error("bench run", s);
        const std::optional<bench::Baseline>& baseline = baseline_read_;

        const CancelSignals signals;
        ctx.cancel = &CancelSignals::flag();
        // A stage of validate runs in its own process group, out of reach of a kill aimed at
        // validate (the OOM killer, MPI_Abort under validate --fleet): it must not outlive it
        // and hold a GPU. SIGTERM when the parent dies, which stops it as a stop request does.
        if (keep_partial_) {
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
            // A parent that died before the line above sends nothing: stop as it would have.
            if (::getppid() != kParentAtStart) ::raise(SIGTERM);
        }
        bench::BenchRun result;
        result.thresholds = thresholds_;
        result.machine = bench::collect_machine_facts();
        const bool tty = ::isatty(STDERR_FILENO) == 1;
        bench::RunHooks hooks;
        // Asked for by name, it could not run: exit 2, as any input that cannot be used.
        hooks.named = [&](const bench::Benchmark& b) {
            return std::find(names_.begin(), names_.end(), b.id()) != names_.end();
        };
        hooks.starting = [&](const bench::Benchmark& b) {
            if (tty) std::fprintf(stderr, "bench: running %s ...\n", b.id());
        };
        auto say_failed = [](const std::string& id, const std::string& why) {
            std::fprintf(stderr, "trainrig bench: %s: %s.\n", id.c_str(), why.c_str());
        };
        // The table shows errors; JSON or a file does not reach the person running it.
        hooks.failed = [&](const bench::Benchmark& b, const Status& s) {
            if (json_ || output_.output) say_failed(b.id(), s.message());
        };
        const bool finished = bench::run_benchmarks(chosen, ctx, result, hooks);
        if (!finished && !keep_partial_)
            return print_error("bench run", bench::interrupted_status());
        if (baseline) bench::apply_baseline(result.records, *baseline);

        const int code = finished ? result.exit_code() : 128 + CancelSignals::received();
        // Another rank reports this run (nccl, nccl-pairs under a launcher): one document, not
        // one per rank on a shared stdout or -o file. This rank says only what failed here.
        if (!result.reporting) {
            if (!json_ && !output_.output)
                for (const auto& e : result.errors) say_failed(e.bench, e.text);
            return code;
        }
        nlohmann::json doc = bench::bench_document(result);
        if (!finished) doc["interrupted"] = true;
        const std::string text = json_ ? json_result(std::move(doc), "bench run", code)
                                       : bench::render_bench_text(result, verbose_);
        return emit_result("bench run", output_, text, code);
    }

private:
    int list(const std::vector<std::unique_ptr<bench::Benchmark>>& benchmarks,
             const bench::BenchContext& ctx) const {
        nlohmann::json rows = nlohmann::json::array();
        std::string text;
        for (const auto& b : benchmarks) {
            const std::string why = b->skip_reason(ctx);
            rows.push_back(
                {{"id", b->id()},
                 {"description", b->description()},
                 {"runs_here", why.empty()},
                 {"skip_reason", why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why)}});
            text += fmt::format("{:<10} {}\n{:<10} {}\n", b->id(), b->description(), "",
                                why.empty() ? "ready" : "skipped here: " + why);
        }
        const auto machine = verbose_ ? bench::collect_machine_facts() : nlohmann::json();
        nlohmann::json doc = {
            {"schema", "trainrig.bench.list"}, {"schema_version", 1}, {"benchmarks", rows}};
        if (verbose_) {
            doc["machine"] = machine;
            text += "\nmachine (expectations are chosen by these):\n";
            for (const auto& [key, value] : machine.items())
                text += fmt::format("  {:<22} {}\n", key,
                                    value.is_string() ? value.get<std::string>() : value.dump());
        }
        const std::string out = json_ ? json_result(std::move(doc), "bench list", 0) : text;
        return emit_result("bench list", output_, out, 0);
    }

    CLI::App* list_ = nullptr;
    CLI::App* run_ = nullptr;
    std::vector<std::string> names_;
    bench::BenchOptions o_;
    bench::Thresholds thresholds_;
    std::string baseline_;
    std::optional<bench::Baseline> baseline_read_;  // --baseline, read by check()
    OutputOptions output_;
    bool json_ = false, verbose_ = false, keep_partial_ = false;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace trainrig

// `trainrig bench tokenizer|loader`: measured throughput of the data path, as trainrig.bench
// records (docs/formats.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "bench/loader_bench.h"
#include "bench/tokenizer_bench.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "commands/print_error.h"
#include "data/tokenizer/open_tokenizer.h"

namespace trainrig {
namespace {

class BenchCommand : public Command {
public:
    const char* name() const override { return "bench"; }
    const char* summary() const override {
        return "Measure throughput: tokenizer encode, training-window loader";
    }

    void declare(CLI::App& app) override {
        app.require_subcommand(1);
        tokenizer_ = app.add_subcommand("tokenizer", "Encode MB/s, tokens/s and documents/s");
        tokenizer_->add_option("--tokenizer", tokenizer_spec_, "Preset name or tokenizer file")
            ->required();
        tokenizer_->add_option("--input", tok_.inputs, "Text files (one document per line)")
            ->required()
            ->expected(1, -1)
            ->check(CLI::ExistingFile);
        tokenizer_->add_option("--threads", tok_.threads, "Thread counts to measure (default 1)")
            ->delimiter(',')
            ->check(CLI::Range(1, 1024));
        tokenizer_->add_option("--repeats", tok_.repeats, "Timed runs per thread count (default 5)")
            ->check(CLI::Range(1, 1000));

        loader_ = app.add_subcommand("loader", "Batches, tokens and MB per second from shards");
        loader_->add_option("--data", load_.data, "Megatron prefixes or llm.c shards")
            ->required()
            ->expected(1, -1);
        loader_->add_option("--batch", load_.batch, "Windows per batch (default 8)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
        loader_->add_option("--window", load_.window, "Tokens per window, T (default 1024)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
        loader_->add_option("--steps", load_.steps, "Batches per timed run (default 200)")
            ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
        loader_->add_option("--repeats", load_.repeats, "Timed runs (default 5)")
            ->check(CLI::Range(1, 1000));
        for (auto* sub : {tokenizer_, loader_}) {
            sub->add_flag("--json", json_, "Write trainrig.bench JSON");
            declare_output_options(*sub, output_);
        }
    }

    int run(const GlobalOptions&) override {
        Result<std::vector<bench::BenchRecord>> records = std::vector<bench::BenchRecord>{};
        if (tokenizer_->parsed()) {
            auto t = data::open_tokenizer(tokenizer_spec_);
            if (!t) return print_error("bench", t.status());
            records = bench::run_tokenizer_bench(**t, tok_);
        } else {
            records = bench::run_loader_bench(load_);
        }
        if (!records) return print_error("bench", records.status());
        const std::string text = json_ ? bench::bench_document(*records).dump(2) + "\n"
                                       : bench::render_records_text(*records);
        if (auto s = write_output(output_, text); !s.ok()) return print_error("bench", s);
        return 0;
    }

private:
    CLI::App* tokenizer_ = nullptr;
    CLI::App* loader_ = nullptr;
    std::string tokenizer_spec_;
    bench::TokenizerBenchOptions tok_;
    bench::LoaderBenchOptions load_;
    OutputOptions output_;
    bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace trainrig

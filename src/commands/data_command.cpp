// `trainrig data tokenize|inspect|verify`: JSONL or text -> token shards (Megatron .bin/.idx or
// llm.c), what a dataset holds, and whether it is sound. See docs/data.md.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <thread>

#include "cli/print_error.h"
#include "cli/shared_options.h"
#include "commands/commands.h"
#include "core/atomic_file.h"
#include "core/cancel_signals.h"
#include "core/text.h"
#include "core/version.h"
#include "data/shards/llmc_format.h"
#include "data/shards/shard_check.h"
#include "data/tokenize/tokenize_pipeline.h"
#include "data/tokenize/tokenize_report.h"
#include "data/tokenizer/open_tokenizer.h"

namespace trainrig {
namespace {

class DataCommand : public Command {
public:
    const char* name() const override { return "data"; }
    const char* summary() const override {
        return "Tokenize JSONL/text into Megatron or llm.c token shards; inspect and verify them";
    }

    void declare(CLI::App& app) override {
        app.require_subcommand(1);
        tokenize_ = app.add_subcommand("tokenize", "Encode documents into token shards");
        tokenize_->add_option("--input", t_.inputs, "JSONL (.gz/.zst too) or text files")
            ->required()
            ->expected(1, -1)
            ->check(CLI::ExistingFile)
            ->type_name("FILE");
        tokenize_
            ->add_option("--input-format", input_format_,
                         "jsonl (default), lines (one document per line) or text (one "
                         "document per file)")
            ->check(CLI::IsMember({"jsonl", "lines", "text"}));
        tokenize_
            ->add_option("--key", key_,
                         "JSON field holding the text, as a dotted path (default: text)")
            ->type_name("KEY");
        tokenize_->add_option("--template", template_,
                              "Join several fields: \"{instruction}\\n{input}\\n{output}\"");
        tokenize_
            ->add_option("--tokenizer", tokenizer_spec_,
                         "gpt2, cl100k, o200k, llama3, or a tokenizer.json, .tiktoken, "
                         "SentencePiece .model or GPT-2 folder")
            ->required();
        tokenize_->add_flag("--append-eod", t_.append_eod,
                            "End every document with the end-of-document token");
        tokenize_->add_flag("--allow-special", t_.allow_special,
                            "Special-token strings in the text become special tokens (default: "
                            "encoded as text)");
        tokenize_
            ->add_option("--output-prefix", output_prefix_,
                         "Where the shards go: PREFIX.bin and PREFIX.idx (Megatron), "
                         "PREFIX_000000.bin ... (llm.c); folders are made (required)")
            ->type_name("PREFIX");
        tokenize_->add_option("--shard-format", format_, "megatron (default) or llmc")
            ->check(CLI::IsMember({"megatron", "llmc"}));
        declare_renamed_option(*tokenize_, "--format", "--shard-format",
                               "--format is a report's format on other commands");
        tokenize_->add_option("--shard-tokens", shard_tokens_,
                              "llmc: tokens per shard (default 100,000,000)");
        tokenize_->add_option("--workers", workers_, "Encoding threads (default: all cores)")
            ->check(CLI::Range(1, 1024));
        tokenize_
            ->add_option("--batch-bytes", t_.batch_bytes,
                         "Input bytes per batch handed to a worker (default 1 MiB)")
            ->check(CLI::Range(size_t{4096}, size_t{1} << 30).description("4 KiB to 1 GiB"));
        tokenize_
            ->add_option("--on-error", on_error_,
                         "fail (default: stop, write nothing) or skip (count and report)")
            ->check(CLI::IsMember({"fail", "skip"}));
        tokenize_->add_flag("--no-progress", no_progress_, "No progress line on a terminal");
        declare_json_option(*tokenize_, json_, "trainrig.data.tokenize");
        declare_verbose_option(*tokenize_, verbose_,
                               "records and bytes read, tokens per document, bytes per token");
        declare_help_footer(
            *tokenize_,
            {"trainrig data tokenize --input corpus.jsonl.zst --tokenizer gpt2 --append-eod "
             "--output-prefix data/train",
             "trainrig data tokenize --input a.jsonl b.jsonl --tokenizer llama3 --template "
             "'{instruction}\\n{output}' --output-prefix sft",
             "trainrig data tokenize --input corpus.jsonl --tokenizer gpt2 --append-eod "
             "--shard-format llmc --output-prefix llmc/train"},
            "Formats and tokenizers: docs/data.md.");

        inspect_ = app.add_subcommand("inspect", "Documents, tokens, length histogram, samples");
        verify_ = app.add_subcommand("verify", "Structural checks and token range");
        for (auto* sub : {inspect_, verify_}) {
            sub->add_option("prefix", prefix_, "Megatron PREFIX, or llm.c shard/prefix")
                ->required()
                ->type_name("PREFIX");
            sub->add_option("--tokenizer", tokenizer_spec_,
                            "Tokenizer (default: the one recorded in PREFIX.meta.json)");
            declare_output_options(*sub, output_);
        }
        declare_output_options(*tokenize_, output_);
        declare_json_option(*inspect_, json_, "trainrig.data.inspect");
        declare_json_option(*verify_, json_, "trainrig.data.verify");
        declare_verbose_option(*inspect_, verbose_, "every file of the dataset with its size");
        declare_verbose_option(*verify_, verbose_,
                               "every file with its size, the largest token id and the limit");
        declare_help_footer(*inspect_, {"trainrig data inspect data/train --show 5",
                                        "trainrig data inspect llmc/train_000000.bin --json"});
        declare_help_footer(*verify_, {"trainrig data verify data/train   # exit 1 on a problem",
                                       "trainrig data verify llmc/train --vocab-size 50257 -v"});
        inspect_->add_option("--show", show_, "Documents to decode (default 3)");
        inspect_->add_option("--max-chars", max_chars_,
                             "Characters shown per document (default 400)");
        verify_->add_option("--vocab-size", vocab_size_, "Token ids must be below this");
    }

    int check(const GlobalOptions& global) override {
        command_ = global.command;
        if (!tokenizer_spec_.empty())
            if (auto s = data::check_tokenizer_spec(tokenizer_spec_); !s.ok()) return fail(s);
        if (!tokenize_->parsed()) {
            // A Megatron PREFIX (PREFIX.idx, PREFIX.bin), an llm.c shard or its prefix.
            std::error_code ec;
            namespace fs = std::filesystem;
            if (!fs::exists(prefix_ + ".idx", ec) && !fs::exists(prefix_ + ".bin", ec) &&
                !fs::is_regular_file(prefix_, ec) && data::llmc_shard_paths(prefix_).empty())
                return fail({Errc::kNotFound,
                             fmt::format("found no token data at {} (neither {}.idx, {}.bin nor "
                                         "llm.c shards)",
                                         prefix_, prefix_, prefix_),
                             "`trainrig data tokenize --output-prefix` writes it"});
            return 0;
        }
        // Checked here, not by CLI11, so that the commonest slip gets its own sentence.
        if (output_prefix_.empty())
            return fail(
                output_.output
                    ? Status{Errc::kInvalidInput,
                             fmt::format("-o/--output {} is the summary file; the shards' "
                                         "prefix is --output-prefix",
                                         *output_.output),
                             fmt::format("add --output-prefix {}/train for shards in that folder",
                                         *output_.output)}
                    : Status{Errc::kInvalidInput, "--output-prefix is required",
                             "--output-prefix data/train writes data/train.bin and .idx"});
        if (!key_.empty() && !template_.empty())
            return fail({Errc::kInvalidInput, "--key and --template exclude each other"});
        if (!template_.empty()) {
            auto tmpl = data::TextTemplate::parse(template_);
            if (!tmpl) return fail(tmpl.status());
            t_.text = std::move(tmpl).value();
        } else if (!key_.empty()) {
            t_.text = data::TextTemplate::single_key(key_);
        }
        return 0;
    }

    int run(const GlobalOptions&) override {
        if (tokenize_->parsed()) return run_tokenize();
        if (inspect_->parsed()) return run_inspect();
        return run_verify();
    }

private:
    // Errors name the subcommand: "trainrig data tokenize: ...".
    int fail(const Status& s) const { return print_error(command_.c_str(), s); }

    int run_tokenize() {
        t_.format = input_format_ == "lines"  ? data::InputFormat::kLines
                    : input_format_ == "text" ? data::InputFormat::kText
                                              : data::InputFormat::kJsonl;
        t_.on_error = on_error_ == "skip" ? data::OnError::kSkip : data::OnError::kFail;
        t_.workers = workers_ > 0 ? workers_ : std::max(1u, std::thread::hardware_concurrency());
        auto tokenizer = data::open_tokenizer(tokenizer_spec_);
        if (!tokenizer) return fail(tokenizer.status());
        const data::Tokenizer& tok = **tokenizer;

        // `--output-prefix tok/train` as the README writes it: the folder is made, as `mkdir -p`
        // would.
        if (const auto dir = std::filesystem::path(output_prefix_).parent_path(); !dir.empty()) {
            std::error_code ec;
            std::filesystem::create_directories(dir, ec);
            if (ec) return fail(errno_status(ec.value(), "create the output folder", dir.string()));
        }
        auto writer = format_ == "llmc"
                          ? data::make_llmc_writer(output_prefix_, tok.vocab_size(), shard_tokens_)
                          : data::make_megatron_writer(output_prefix_, tok.vocab_size());
        if (!writer) return fail(writer.status());

        // SIGINT/SIGTERM stop the run (and a commit that has not started renaming) cleanly,
        // leaving the previous output as it was; the handlers stay until the files are in place.
        const CancelSignals signals;
        t_.cancel = &CancelSignals::flag();
        const bool show_progress = !no_progress_ && !json_ && ::isatty(STDERR_FILENO) == 1;
        auto stats = data::run_tokenize(tok, t_, **writer, [&](const data::TokenizeStats& s) {
            if (show_progress) std::fprintf(stderr, "\r%s\x1b[K", data::progress_line(s).c_str());
        });
        if (show_progress) std::fprintf(stderr, "\r\x1b[K");
        if (!stats) return fail(stats.status());
        if (stats->documents == 0)
            return fail(Status{
                Errc::kInvalidInput,
                fmt::format("found no documents in {} (nothing written)", join(t_.inputs, ", "))});
        data::TokenizeRun run{tokenizer_spec_, &tok, &t_, format_, (*writer)->dtype(), {}, *stats};
        auto files = (*writer)->commit(&CancelSignals::flag());
        if (!files) return fail(files.status());
        run.files = *files;
        if (auto s = write_file_atomic(output_prefix_ + ".meta.json",
                                       data::meta_json(run).dump(2) + "\n");
            !s.ok())
            return fail(s);
        std::vector<std::string> warnings;
        if (format_ == "llmc" && !t_.append_eod)
            warnings.push_back(
                "llm.c shards mark documents only by the end-of-text token, and --append-eod "
                "was not given: the documents run into each other");
        for (const auto& w : warnings)
            std::fprintf(stderr, "trainrig %s: %s.\n", command_.c_str(), w.c_str());
        std::string text;
        if (json_) {
            auto doc = data::tokenize_json(run);
            doc["warnings"] = warnings;
            text = json_result(std::move(doc), "data tokenize", 0);
        } else {
            text = data::render_tokenize_text(run);
            if (verbose_) text += tokenize_detail(*stats);
        }
        return emit(text, 0);
    }

    Result<std::shared_ptr<const data::Tokenizer>> tokenizer_for(const std::string& prefix) {
        std::string spec = tokenizer_spec_;
        if (spec.empty()) spec = data::recorded_tokenizer(prefix).value_or("");
        if (spec.empty()) return std::shared_ptr<const data::Tokenizer>();
        return data::open_tokenizer(spec);
    }

    int run_inspect() {
        auto tok = tokenizer_for(prefix_);
        if (!tok) return fail(tok.status());
        auto summary = data::inspect_shards(prefix_, show_, max_chars_, tok->get());
        if (!summary) return fail(summary.status());
        return emit(json_ ? json_result(data::summary_json(*summary), "data inspect", 0)
                          : data::render_summary_text(*summary) +
                                (verbose_ ? file_sizes(summary->files) : ""),
                    0);
    }

    int run_verify() {
        std::optional<size_t> vocab;
        if (vocab_size_ > 0) {
            vocab = vocab_size_;
        } else if (!tokenizer_spec_.empty()) {
            auto tok = data::open_tokenizer(tokenizer_spec_);
            if (!tok) return fail(tok.status());
            vocab = (*tok)->vocab_size();
        } else {
            vocab = data::recorded_vocab_size(prefix_);
        }
        auto report = data::verify_shards(prefix_, vocab);
        if (!report) return fail(report.status());
        const int code = report->problems.empty() ? 0 : 1;
        std::string text;
        if (json_) {
            text = json_result(data::verify_json(*report), "data verify", code);
        } else {
            text = data::render_verify_text(*report);
            if (verbose_) {
                text += file_sizes(report->files);
                text += fmt::format("largest token id {}, limit {}\n",
                                    report->max_token ? std::to_string(*report->max_token)
                                                      : std::string("none (no token read)"),
                                    report->vocab_size
                                        ? fmt::format("< {}", *report->vocab_size)
                                        : std::string("unknown (no tokenizer, no --vocab-size)"));
            }
        }
        return emit(text, code);
    }

    static std::string tokenize_detail(const data::TokenizeStats& s) {
        const auto per = [](uint64_t a, uint64_t b) {
            return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
        };
        return fmt::format(
            "  read {} records, {} bytes decompressed ({} on disk), {} bytes of text\n"
            "  {:.1f} tokens per document, {:.2f} bytes of text per token\n",
            s.records, s.input_bytes, s.file_bytes_total, s.text_bytes, per(s.tokens, s.documents),
            per(s.text_bytes, s.tokens));
    }

    static std::string file_sizes(const std::vector<std::string>& files) {
        std::string out = "files:\n";
        for (const auto& f : files) {
            std::error_code ec;
            const auto size = std::filesystem::file_size(f, ec);
            out += ec ? fmt::format("  {} (size unknown: {})\n", f, ec.message())
                      : fmt::format("  {} {} bytes\n", f, size);
        }
        return out;
    }

    int emit(const std::string& text, int code) {
        return emit_result(command_.c_str(), output_, text, code);
    }

    CLI::App* tokenize_ = nullptr;
    CLI::App* inspect_ = nullptr;
    CLI::App* verify_ = nullptr;
    data::TokenizeOptions t_;
    std::string input_format_ = "jsonl", key_, template_, tokenizer_spec_, output_prefix_;
    std::string format_ = "megatron", on_error_ = "fail", prefix_;
    uint64_t shard_tokens_ = 100'000'000;
    unsigned workers_ = 0;
    size_t show_ = 3, max_chars_ = 400, vocab_size_ = 0;
    bool json_ = false, no_progress_ = false, verbose_ = false;
    OutputOptions output_;
    std::string command_ = "data";  // "data tokenize": the words errors name
};

}  // namespace

std::unique_ptr<Command> make_data_command() { return std::make_unique<DataCommand>(); }

}  // namespace trainrig

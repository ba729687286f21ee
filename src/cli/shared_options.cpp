// Shared option declarations and output writing; see shared_options.h.
#include "cli/shared_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "cli/print_error.h"
#include "core/atomic_file.h"

namespace trainrig {

void declare_root_option(CLI::App& app, std::filesystem::path& root) {
    app.add_option("--root", root,
                   "Read the machine under DIR instead of / (a copy of /proc, /sys, "
                   "/etc and /dev/kmsg, as in tests/fixtures/machines)")
        ->envname("TRAINRIG_ROOT")
        ->check(existing_input())
        ->type_name("DIR");
}

void declare_root_options(CLI::App& app, CollectOptions& opts) {
    declare_root_option(app, opts.root);
    app.add_option_function<double>(
           "--timeout",
           [&opts](double seconds) {
               opts.deadline = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
           },
           "Give the GPU driver (NVML), the CUDA/NCCL libraries and nvcc SECONDS to answer "
           "before reporting that they did not (importing torch gets 4x)")
        ->envname("TRAINRIG_TIMEOUT")
        ->check(CLI::Range(0.1, 600.0))
        ->default_str("5")
        ->type_name("SECONDS");
}

void declare_env_file_option(CLI::App& app, CollectOptions& opts) {
    app.add_option("--env-file", opts.env_file,
                   "Judge the NCCL/torch variables in FILE (KEY=VALUE lines) instead of this "
                   "process's environment")
        ->check(existing_input())
        ->type_name("FILE");
}

void declare_machine_options(CLI::App& app, CollectOptions& opts) {
    declare_root_options(app, opts);
    app.add_option("--data-dir", opts.data_dir,
                   "Check the storage behind the folder training data is read from")
        ->envname("TRAINRIG_DATA_DIR")
        ->type_name("PATH");
    declare_env_file_option(app, opts);
    app.add_flag("--import-torch", opts.torch_import,
                 "Start python3 and import torch to ask whether it can use CUDA and how many GPUs "
                 "it sees (a second or more); without it, PyTorch's version, CUDA build and NCCL "
                 "are read from its installed metadata");
}

CLI::Validator existing_input() {
    return CLI::Validator(
        [](std::string& value) {
            std::error_code ec;
            if (value.empty() || std::filesystem::exists(value, ec)) return std::string();
            return fmt::format("no such file or folder: {}", value);
        },
        "", "existing input");
}

void declare_expect_gpus(CLI::App& app, int& expect_gpus) {
    app.add_option("--expect-gpus", expect_gpus,
                   "Number of GPUs this machine should have (firmware can hide some from the bus)")
        ->envname("TRAINRIG_EXPECT_GPUS")
        ->check(CLI::Range(0, 1024))
        ->type_name("N");
}

void declare_output_options(CLI::App& app, OutputOptions& opts) {
    app.add_option("-o,--output", opts.output,
                   "Write to FILE (replaced atomically: readers never see half a file) instead of "
                   "stdout; - is stdout")
        ->type_name("FILE");
}

void declare_json_option(CLI::App& app, bool& json, std::string_view schema) {
    app.add_flag("--json", json,
                 fmt::format("Write the result as JSON (schema {}; docs/formats.md)", schema));
}

void declare_verbose_option(CLI::App& app, bool& verbose, std::string_view adds) {
    app.add_flag("-v,--verbose", verbose, fmt::format("More detail: {}", adds));
}

void declare_data_path_inputs(CLI::App& app, std::string& tokenizer,
                              std::vector<std::string>& inputs, std::vector<std::string>& shards) {
    app.add_option("--tokenizer", tokenizer, "tokenizer: preset name or file");
    app.add_option("--input", inputs, "tokenizer: text files, one document per line")
        ->expected(1, -1)
        ->check(CLI::ExistingFile)
        ->type_name("FILE");
    app.add_option("--shards", shards, "loader: Megatron prefixes or llm.c shards")
        ->expected(1, -1)
        ->type_name("PREFIX");
}

void declare_gpu_selection(CLI::App& app, std::vector<int>& gpus) {
    app.add_option_function<std::vector<std::string>>(
           "--gpus",
           [&gpus](const std::vector<std::string>& items) {
               gpus.clear();
               if (items.size() == 1 && items[0] == "all") return;
               for (const auto& item : items) {
                   int index = -1;
                   const auto* end = item.data() + item.size();
                   const auto [p, ec] = std::from_chars(item.data(), end, index);
                   if (ec != std::errc() || p != end || index < 0 || index > 4095)
                       throw CLI::ValidationError(
                           "--gpus", fmt::format("'{}' is not a GPU index (give all or CUDA "
                                                 "indices such as 0,1,3)",
                                                 item));
                   if (std::find(gpus.begin(), gpus.end(), index) != gpus.end())
                       throw CLI::ValidationError("--gpus",
                                                  fmt::format("GPU {} is named twice", index));
                   gpus.push_back(index);
               }
           },
           kGpuSelectionHelp)
        ->delimiter(',')
        ->type_name("all|LIST");
}

void declare_renamed_option(CLI::App& app, const std::string& old_name, const std::string& new_name,
                            std::string_view why) {
    const std::string message =
        fmt::format("{} is now {} ({})", old_name, new_name, std::string(why));
    app.add_option_function<std::string>(
           old_name, [message](const std::string&) { throw CLI::ValidationError(message); },
           "Renamed: " + new_name)
        ->group("");  // not in --help
}

void declare_help_footer(CLI::App& app, std::initializer_list<std::string_view> examples,
                         std::string_view more) {
    std::string text = "\nExamples:\n";
    for (auto e : examples) text += fmt::format("  {}\n", e);
    if (!more.empty()) text += fmt::format("\n{}", more);
    if (!text.ends_with('\n')) text += '\n';
    app.footer(text);
}

int emit_result(const char* command, const OutputOptions& opts, const std::string& text,
                int exit_code) {
    if (auto s = write_output(opts, text); !s.ok()) return print_error(command, s);
    return exit_code;
}

Status write_output(const OutputOptions& opts, const std::string& text) {
    if (opts.output && *opts.output != "-") return write_file_atomic(*opts.output, text);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
        return errno_status(errno, "write", "standard output");
    return ok_status();
}

}  // namespace trainrig

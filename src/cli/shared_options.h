// Options that more than one command takes, declared here once so that their names, environment
// twins and help text cannot drift apart between commands.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_result.h"
#include "probe/collect.h"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace trainrig {

// Where results go: --output FILE (atomically replaced) or stdout.
struct OutputOptions {
    std::optional<std::string> output;
};

// --root (and TRAINRIG_ROOT): the machine tree a command reads or changes instead of /.
void declare_root_option(CLI::App& app, std::filesystem::path& root);
// --root, --timeout: where the machine is read from.
void declare_root_options(CLI::App& app, CollectOptions& opts);
// Those, plus --data-dir, --env-file and --import-torch: what doctor and collect judge.
void declare_machine_options(CLI::App& app, CollectOptions& opts);
// --env-file alone: the NCCL/torch variables judged (tune reads them; it has no storage or
// PyTorch import to judge).
void declare_env_file_option(CLI::App& app, CollectOptions& opts);
// The check of an input path the user names (a file or folder to read): it must exist, or the
// line is refused with "--snapshot: no such file or folder: PATH" before anything runs. Only a
// default may be absent. Outputs (-o, --report, --ckpt-dir ...) do not take it.
CLI::Validator existing_input();
void declare_output_options(CLI::App& app, OutputOptions& opts);
// --expect-gpus (and TRAINRIG_EXPECT_GPUS): the GPUs the machine should have; -1 when not given.
void declare_expect_gpus(CLI::App& app, int& expect_gpus);

// The options of the CLI contract (docs/cli.md), declared here so that one flag name has one
// meaning and one help text on every command:
//   --json    the result as one JSON document of `schema` (with the envelope of json_result);
//   -v        more of the evidence behind the result; `adds` says what, for this command;
//   --gpus    a GPU selection, never a count: `all` (empty) or CUDA indices `0,1,3`.
inline constexpr const char* kGpuSelectionHelp =
    "GPUs to use: all (default: every GPU CUDA sees, as CUDA_VISIBLE_DEVICES narrows them) or "
    "CUDA indices, comma-separated (0,1,3)";
void declare_json_option(CLI::App& app, bool& json, std::string_view schema);
void declare_verbose_option(CLI::App& app, bool& verbose, std::string_view adds);
void declare_gpu_selection(CLI::App& app, std::vector<int>& gpus);
// The data path's inputs (bench run tokenizer/loader, validate's data-path stage): --tokenizer
// (a preset name or file), --input (text files it encodes), --shards (the loader's tokens).
void declare_data_path_inputs(CLI::App& app, std::string& tokenizer,
                              std::vector<std::string>& inputs, std::vector<std::string>& shards);
// An option that took another name: typing the old one is an error naming the new one.
void declare_renamed_option(CLI::App& app, const std::string& old_name, const std::string& new_name,
                            std::string_view why);
// The help footer: examples (each a command line, optionally "  # comment"), then `more`.
void declare_help_footer(CLI::App& app, std::initializer_list<std::string_view> examples,
                         std::string_view more = {});

// Writes text to the --output file (temp + fsync + rename) or to stdout.
Status write_output(const OutputOptions& opts, const std::string& text);
// How a command ends with its result: written as write_output does, then `exit_code`; a write
// that fails is one sentence on stderr and exit 2.
int emit_result(const char* command, const OutputOptions& opts, const std::string& text,
                int exit_code = 0);

}  // namespace trainrig

// Options that more than one command takes, declared here once so that their names, environment
// twins and help text cannot drift apart between commands.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "probe/collect.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace trainrig {

// Where results go: --output FILE (atomically replaced) or stdout.
struct OutputOptions {
    std::optional<std::string> output;
};

// --root, --timeout: where the machine is read from.
void declare_root_options(CLI::App& app, CollectOptions& opts);
// Those, plus --data-dir and --env-file: what doctor and collect judge.
void declare_machine_options(CLI::App& app, CollectOptions& opts);
void declare_output_options(CLI::App& app, OutputOptions& opts);

// A command's JSON result as every command writes it (docs/cli.md): the document's own fields
// plus `trainrig_version`, `command` ("doctor", "tune show") and `exit_code`, two-space
// indented, one newline at the end; text that is not UTF-8 is replaced, never an exception.
std::string json_result(nlohmann::json doc, std::string_view command, int exit_code);

// Writes text to the --output file (temp + fsync + rename) or to stdout.
Status write_output(const OutputOptions& opts, const std::string& text);

}  // namespace trainrig

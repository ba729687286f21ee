// Parsers for what the software-stack probe reads from commands: `nvcc --version` and the
// JSON line the torch probe script prints.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "snapshot/gpu_facts.h"

namespace trainrig {

// "Cuda compilation tools, release 12.6, V12.6.85" -> "12.6.85" (or "12.6" without the V part).
Result<std::string> parse_nvcc_version(std::string_view text);

// The torch probe's output: {"torch": null} when torch is not installed (-> nullopt), else the
// facts. A line that is not that JSON is kInvalidInput.
Result<std::optional<TorchFacts>> parse_torch_probe(std::string_view text);

// The Python script whose output parse_torch_probe() reads.
const char* torch_probe_script();

// NCCL's integer version as text: 22304 -> "2.23.4"; before 2.9, 2708 -> "2.7.8".
std::string nccl_version_text(int64_t code);

}  // namespace trainrig

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

// A Python package's version from its METADATA (dist-info) or PKG-INFO (egg-info): the first
// "Version:" header (core metadata, packaging.python.org/specifications/core-metadata).
Result<std::string> parse_package_version(std::string_view metadata);

// torch/version.py, written by torch's setup: `__version__ = '2.5.1+cu124'` and
// `cuda: Optional[str] = '12.4'` (`cuda = None` for a CPU-only build; older releases have no
// annotation). Only those two assignments are read; nothing is executed.
struct TorchVersionPy {
    std::string version;
    std::optional<std::string> cuda;  // nullopt: None, a CPU-only build
};
Result<TorchVersionPy> parse_torch_version_py(std::string_view text);

// NCCL's integer version as text: 22304 -> "2.23.4"; before 2.9, 2708 -> "2.7.8".
std::string nccl_version_text(int64_t code);

}  // namespace trainrig

// The environment lock: the versions a machine trains with (kernel, NVIDIA driver, CUDA runtime
// and toolkit, NCCL, PyTorch with its CUDA and NCCL) and the tuning profile's files, recorded
// by `trainrig tune lock` so that `trainrig doctor --lock FILE` can report every drift
// (rule stack.drift). The article's "version locking" and "driver rollback plan" (§4.1, §5.2),
// made checkable. Format: schema "trainrig.stack.lock" (docs/formats.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "snapshot/snapshot.h"

namespace trainrig {

struct StackLock {
    std::string created;  // UTC, ISO 8601
    std::string host;
    // name -> version; only what could be read when locking is recorded.
    std::map<std::string, std::string> versions;
    // managed file -> content (none: the file did not exist)
    std::map<std::string, std::optional<std::string>> profile;
};

// Whether a version read now keeps a locked value: the same text, or for a value `>=X` any
// version at least X (dotted, numerically: a driver floor), or for `X.*` X itself or any X.Y
// (a release series: "2.14.*" keeps "2.14.0+cu132"). `trainrig tune lock` writes exact values;
// `trainrig stack --lock` writes the floors and series of a recommendation.
bool lock_value_matches(std::string_view locked, std::string_view now);

// The versions this snapshot shows: kernel, nvidia_driver, cuda_runtime, cuda_toolkit, nccl,
// torch, torch_cuda, torch_nccl; unknown ones are absent.
std::map<std::string, std::string> stack_versions(const Snapshot& s);

nlohmann::json stack_lock_to_json(const StackLock& lock);
std::string stack_lock_to_text(const StackLock& lock);
Result<StackLock> stack_lock_from_text(std::string_view text, std::string_view where);

}  // namespace trainrig

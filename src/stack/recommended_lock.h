// The recommendation as an environment lock (schema trainrig.stack.lock, docs/formats.md), so
// that `trainrig doctor --lock FILE` checks a machine against it (rule stack.drift): the driver
// as a floor (">=595.45.04"), PyTorch as a release series ("2.14.*"), its CUDA and NCCL exactly.
#pragma once

#include <optional>
#include <string>

#include "stack/recommend.h"
#include "stack/stack_lock.h"

namespace trainrig::stack {

// nullopt when the recommendation was not judged (a pin newer than the data): nothing to lock.
std::optional<StackLock> recommended_lock(const Recommendation& r, const std::string& created);

// The lock file's text: the lock, plus "origin" saying what recommended it.
std::string recommended_lock_text(const StackLock& lock, const Recommendation& r,
                                  const StackData& d);

}  // namespace trainrig::stack

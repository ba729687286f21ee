// A recommendation as a stack lock; see recommended_lock.h.
#include "stack/recommended_lock.h"

#include <fmt/format.h>

#include "stack/compat.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {

std::optional<StackLock> recommended_lock(const Recommendation& r, const std::string& created) {
    if (!r.judged || !r.build) return std::nullopt;
    StackLock lock;
    lock.created = created;
    lock.versions["nvidia_driver"] = ">=" + r.driver_min;
    lock.versions["torch"] = r.torch_version + ".*";
    lock.versions["torch_cuda"] = cuda_text(r.cuda);
    if (!r.build->nccl.empty()) lock.versions["torch_nccl"] = r.build->nccl;
    return lock;
}

std::string recommended_lock_text(const StackLock& lock, const Recommendation& r,
                                  const StackData& d) {
    auto doc = stack_lock_to_json(lock);
    doc["origin"] =
        fmt::format("trainrig stack for {} ({}+{}, R{}), data current to {}", r.gpu.name,
                    r.torch_version, cuda_tag(r.cuda), r.driver_branch, d.current_to);
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainrig::stack

// Thread CPU affinity for NUMA-local first touch, restored on scope exit.
#include "cuda/bench/numa_binding.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/text.h"

namespace trainrig::cuda {

NumaBinding::NumaBinding(const RootFs& fs, int node) {
    if (node < 0) {
        why_ = "the kernel reports no NUMA node for this GPU";
        return;
    }
    const std::string path = fmt::format("/sys/devices/system/node/node{}/cpulist", node);
    auto text = fs.read_trimmed(path);
    if (!text.ok()) {
        why_ = text.status().message();
        return;
    }
    auto cpus = parse_cpulist(*text);
    if (!cpus || cpus->empty()) {
        why_ = fmt::format("{} lists no CPUs", path);
        return;
    }
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) {
        why_ = fmt::format("sched_getaffinity: {}", std::strerror(errno));
        return;
    }
    cpu_set_t want;
    CPU_ZERO(&want);
    for (const int c : *cpus)
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &want);
    if (sched_setaffinity(0, sizeof want, &want) != 0) {
        // A cgroup cpuset that excludes the node's CPUs: measure unbound, and say so.
        why_ = fmt::format("sched_setaffinity to node {}: {}", node, std::strerror(errno));
        return;
    }
    bound_ = true;
}

NumaBinding::~NumaBinding() {
    if (bound_) sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace trainrig::cuda

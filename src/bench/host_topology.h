// The live machine's cores, NUMA nodes and last-level caches through hwloc, for the host
// benchmarks: which CPU each benchmark thread is pinned to, and which node its memory is on.
#pragma once

#include <hwloc.h>

#include <cstddef>
#include <vector>

#include "core/status.h"

namespace trainrig::bench {

struct HostCore {
    unsigned pu = 0;  // OS index of the core's first hardware thread
    int numa_node = -1;
};

// Physical memory of the machine, and what is available now (sysconf); 0 when unknown.
size_t total_memory_bytes();
size_t available_memory_bytes();

class HostTopology {
public:
    static Result<HostTopology> load();
    HostTopology(HostTopology&& other) noexcept : t_(other.t_) { other.t_ = nullptr; }
    HostTopology& operator=(HostTopology&&) = delete;
    HostTopology(const HostTopology&) = delete;
    ~HostTopology();

    std::vector<HostCore> cores() const;    // one entry per physical core
    std::vector<int> numa_nodes() const;    // OS indices
    int packages() const;                   // sockets
    size_t last_level_cache_bytes() const;  // summed over all caches of the last level

    // Pins the calling thread to one hardware thread.
    Status bind_thread(unsigned pu) const;
    // Places [addr, addr + bytes) on NUMA node `node` (strict bind, before first touch).
    Status bind_memory(void* addr, size_t bytes, int node) const;

private:
    explicit HostTopology(hwloc_topology_t t) : t_(t) {}
    hwloc_topology_t t_ = nullptr;
};

}  // namespace trainrig::bench

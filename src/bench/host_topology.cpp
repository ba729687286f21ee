#include "bench/host_topology.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace trainrig::bench {

namespace {

size_t pages_bytes(int name) {
    const long pages = ::sysconf(name), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

}  // namespace

size_t total_memory_bytes() { return pages_bytes(_SC_PHYS_PAGES); }
size_t available_memory_bytes() { return pages_bytes(_SC_AVPHYS_PAGES); }

Result<HostTopology> HostTopology::load() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0)
        return Status{Errc::kInternal, "hwloc could not initialise a topology"};
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return Status{Errc::kIo, "hwloc could not read this machine's topology"};
    }
    return HostTopology(t);
}

HostTopology::~HostTopology() {
    if (t_) hwloc_topology_destroy(t_);
}

std::vector<HostCore> HostTopology::cores() const {
    std::vector<HostCore> out;
    for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(t_, HWLOC_OBJ_CORE, c));) {
        const int pu = hwloc_bitmap_first(c->cpuset);
        if (pu < 0) continue;
        HostCore core{static_cast<unsigned>(pu), -1};
        if (c->nodeset && hwloc_bitmap_weight(c->nodeset) == 1)
            core.numa_node = hwloc_bitmap_first(c->nodeset);
        out.push_back(core);
    }
    return out;
}

std::vector<int> HostTopology::numa_nodes() const {
    std::vector<int> out;
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t_, HWLOC_OBJ_NUMANODE, n));)
        out.push_back(static_cast<int>(n->os_index));
    return out;
}

int HostTopology::packages() const {
    return std::max(1, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PACKAGE));
}

size_t HostTopology::last_level_cache_bytes() const {
    for (const auto type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
        size_t total = 0;
        for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(t_, type, c));)
            total += c->attr ? c->attr->cache.size : 0;
        if (total > 0) return total;
    }
    return 0;
}

Status HostTopology::bind_thread(unsigned pu) const {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, pu);
    const int rc = hwloc_set_cpubind(t_, set, HWLOC_CPUBIND_THREAD);
    const int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0)
        return Status{Errc::kIo,
                      fmt::format("could not pin a thread to CPU {}: {}", pu, std::strerror(err))};
    return Status{};
}

Status HostTopology::bind_memory(void* addr, size_t bytes, int node) const {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, static_cast<unsigned>(node));
    const int rc = hwloc_set_area_membind(t_, addr, bytes, set, HWLOC_MEMBIND_BIND,
                                          HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
    const int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0)
        return Status{Errc::kIo, fmt::format("could not bind memory to NUMA node {}: {}", node,
                                             std::strerror(err))};
    return Status{};
}

}  // namespace trainrig::bench

// Probe of the CPU/NUMA/PCI topology through hwloc. Under --root, hwloc reads the same tree:
// HWLOC_FSROOT points its Linux backend there, and the components that ignore that root are
// turned off: x86 (CPUID describes this host's processor), pci (libpciaccess reads the host's
// bus), opencl and gl. Off everywhere: pci (the Linux backend reads /sys/bus/pci itself, and
// libpciaccess leaks), and the GPU-runtime components (cuda, nvml, rsmi, levelzero): doctor
// must not depend on a driver answering, and those facts belong to the GPU layer.
#include <fmt/format.h>
#include <hwloc.h>

#include <cstdlib>
#include <optional>

#include "probe/probes.h"

namespace trainrig {

namespace {

// Sets environment variables for the lifetime of the object, restoring what was there.
class ScopedEnv {
public:
    void set(const char* key, const std::string& value) {
        const char* old = std::getenv(key);
        saved_.push_back({key, old ? std::optional<std::string>(old) : std::nullopt});
        ::setenv(key, value.c_str(), 1);
    }
    ~ScopedEnv() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            if (it->second)
                ::setenv(it->first, it->second->c_str(), 1);
            else
                ::unsetenv(it->first);
        }
    }

private:
    std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::string bitmap_list(hwloc_const_bitmap_t set) {
    if (!set) return {};
    char* s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return {};
    std::string out(s);
    std::free(s);
    return out;
}

int count(hwloc_topology_t t, hwloc_obj_type_t type) {
    int n = hwloc_get_nbobjs_by_type(t, type);
    return n < 0 ? 0 : n;
}

}  // namespace

Fact<Topology> probe_topology(const RootFs& fs) {
    // Without the tree's CPU folder hwloc would quietly count this host's processors.
    if (!fs.is_live() && !fs.is_dir("/sys/devices/system/cpu"))
        return Fact<Topology>::failed(
            {Errc::kInvalidInput,
             "the machine tree has no /sys/devices/system/cpu to read the topology from"});
    ScopedEnv env;
    env.set("HWLOC_HIDE_ERRORS", "2");  // failures are reported through the Fact, not stderr
    if (fs.is_live()) {
        env.set("HWLOC_COMPONENTS", "-pci,-opencl,-gl,-cuda,-nvml,-rsmi,-levelzero");
    } else {
        env.set("HWLOC_FSROOT", fs.root().string());
        env.set("HWLOC_COMPONENTS", "-x86,-pci,-opencl,-gl,-cuda,-nvml,-rsmi,-levelzero");
    }
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0)
        return Fact<Topology>::failed({Errc::kInternal, "hwloc could not initialise a topology"});
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return Fact<Topology>::failed(
            {Errc::kIo,
             fmt::format("hwloc could not read the topology under {}", fs.root().string())});
    }
    Topology topo;
    topo.packages = count(t, HWLOC_OBJ_PACKAGE);
    topo.cores = count(t, HWLOC_OBJ_CORE);
    topo.pus = count(t, HWLOC_OBJ_PU);
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));) {
        NumaNode node;
        node.os_index = static_cast<int>(n->os_index);
        node.cpulist = bitmap_list(n->cpuset);
        node.memory_bytes = n->attr ? n->attr->numanode.local_memory : 0;
        topo.numa_nodes.push_back(std::move(node));
    }
    for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(t, d));) {
        const auto& pci = d->attr->pcidev;
        if (pci.vendor_id != 0x10de) continue;
        PciLocality loc;
        loc.address =
            fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
        if (hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, d)) {
            loc.cpulist = bitmap_list(a->cpuset);
            // A damaged tree can leave hwloc with objects that have no sets at all.
            if (a->nodeset)
                for (int i = hwloc_bitmap_first(a->nodeset); i >= 0;
                     i = hwloc_bitmap_next(a->nodeset, i))
                    loc.numa_nodes.push_back(i);
        }
        topo.pci_locality.push_back(std::move(loc));
    }
    hwloc_topology_destroy(t);
    return Fact<Topology>::known(std::move(topo));
}

}  // namespace trainrig

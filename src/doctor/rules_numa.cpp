// NUMA rule: which socket each GPU hangs off, so the launcher can bind data loaders and the
// training process next to it. article §2.3 (numactl --cpunodebind --membind), §5.1.
#include <fmt/format.h>

#include "doctor/gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

void check_gpu_affinity(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.pci_devices, f)) return;
    if (!need(s.topology, f)) return;
    if (!s.topology.is_known())
        return f.raise(FindingStatus::kError, "the snapshot has no NUMA topology");
    const auto& topo = s.topology.value();
    const bool multi_node = is_multi_node(topo);
    auto table = nlohmann::json::array();
    std::vector<std::string> unknown;
    for (const auto* g : select_gpus(s).gpus) {
        if (!need(g->numa_node, f)) continue;
        const int64_t node = g->numa_node.is_known() ? g->numa_node.value() : -1;
        std::string cpus = g->local_cpulist.is_known() ? g->local_cpulist.value() : "";
        if (cpus.empty())
            for (const auto& loc : topo.pci_locality)
                if (loc.address == g->address) cpus = loc.cpulist;
        table.push_back({{"gpu", g->address}, {"numa_node", node}, {"cpus", cpus}});
        f.evidence.push_back(
            fmt::format("{} -> NUMA node {} -> CPUs {}", gpu_label(*g),
                        node < 0 ? std::string("unknown (-1)") : std::to_string(node),
                        cpus.empty() ? "?" : cpus));
        if (node < 0 && multi_node) unknown.push_back(g->address);
    }
    f.data = {{"gpus", table}, {"numa_nodes", topo.numa_nodes.size()}, {"packages", topo.packages}};
    if (!unknown.empty()) {
        f.raise(FindingStatus::kWarn,
                fmt::format("the kernel does not know the NUMA node of {} on this machine with "
                            "{} sockets and {} NUMA nodes",
                            fmt::join(unknown, ", "), topo.packages, topo.numa_nodes.size()));
        f.remedy =
            "The firmware's ACPI tables (_PXM/SRAT) give no node for these GPUs: enable the "
            "NUMA/ACPI SRAT options in the firmware or update it; meanwhile bind by hand "
            "(`numactl --cpunodebind=N --membind=N`) after checking `lstopo`.";
        return;
    }
    f.raise(FindingStatus::kPass,
            multi_node
                ? fmt::format("{} GPUs mapped to their NUMA nodes", table.size())
                : fmt::format("{} GPUs on a single-socket, single-node machine", table.size()));
}

}  // namespace

std::vector<Rule> numa_rules() {
    return {
        {"numa.gpu-affinity",
         "NUMA node and local CPUs of each GPU",
         {"training-machine article §2.3, §5.1 (curves out of step: NUMA binding lost)"},
         [](const Snapshot& s, const RuleOptions&) { return no_gpu_reason(s); },
         check_gpu_affinity},
    };
}

}  // namespace trainrig

#include "launch/binding.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/gpu_selection.h"
#include "core/text.h"
#include "hw/snapshot_gpus.h"

namespace trainrig::launch {

std::vector<GpuPlace> gpu_places(const Snapshot& s) {
    std::vector<GpuPlace> out;
    // NVIDIA GPUs as doctor selects them: a board's VGA controller (a BMC's ASPEED) is no GPU.
    for (const PciDevice* g : select_gpus(s).gpus) {
        const PciDevice& d = *g;
        GpuPlace p;
        p.address = d.address;
        if (d.numa_node.is_known()) p.node = static_cast<int>(d.numa_node.value());
        if (d.local_cpulist.is_known()) p.cpus = d.local_cpulist.value();
        if (s.topology.is_known())
            for (const auto& loc : s.topology.value().pci_locality)
                if (loc.address == d.address && !loc.numa_nodes.empty()) {
                    p.node = loc.numa_nodes.front();
                    p.cpus = loc.cpulist;
                }
        out.push_back(p);
    }
    std::sort(out.begin(), out.end(),
              [](const GpuPlace& a, const GpuPlace& b) { return a.address < b.address; });
    for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
    return out;
}

Result<RankEnv> rank_from_env(const std::map<std::string, std::string>& env) {
    return local_rank_from_env([&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

Result<Binding> choose_binding(const std::vector<GpuPlace>& places, std::vector<int> selected,
                               NumaMode mode, const RankEnv& rank) {
    Binding b;
    if (selected.empty())
        for (const auto& p : places) selected.push_back(p.index);
    TRAINRIG_TRY(check_gpu_selection(selected, places.size()));
    b.gpus = selected;
    if (rank.local_rank) {
        if (*rank.local_rank >= static_cast<int>(selected.size()))
            return Status{Errc::kInvalidInput,
                          fmt::format("{}={} but the job has {} GPU(s); start one rank per GPU",
                                      rank.from, *rank.local_rank, selected.size())};
        b.gpu = selected[static_cast<size_t>(*rank.local_rank)];
    } else if (selected.size() == 1) {
        b.gpu = selected.front();
    }
    if (mode == NumaMode::kNone) {
        b.why = "--numa none: not bound";
        return b;
    }
    if (!b.gpu) {
        b.why = places.empty() ? "no GPU on this machine: not bound"
                               : fmt::format(
                                     "one process for {} GPUs: not bound (one rank per "
                                     "GPU: --torchrun, --mpirun or --srun)",
                                     selected.size());
        return b;
    }
    const auto& p = places[static_cast<size_t>(*b.gpu)];
    if (p.node < 0 || p.cpus.empty()) {
        b.why = fmt::format("GPU {} ({}): the firmware reports no NUMA node; not bound", p.index,
                            p.address);
        return b;
    }
    b.node = p.node;
    b.cpus = p.cpus;
    b.why =
        fmt::format("{}GPU {} ({}) -> NUMA node {}, CPUs {}",
                    rank.local_rank ? fmt::format("rank {} ({}) -> ", *rank.local_rank, rank.from)
                                    : std::string(),
                    p.index, p.address, p.node, p.cpus);
    return b;
}

Status apply_binding(const Binding& b) {
    if (b.node < 0) return ok_status();
    auto cpus = parse_cpulist(b.cpus);
    if (!cpus || cpus->empty())
        return {Errc::kInvalidInput, fmt::format("CPU list \"{}\" is not valid", b.cpus)};
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : *cpus)
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    if (::sched_setaffinity(0, sizeof(set), &set) != 0)
        return errno_status(errno, "bind to CPUs", b.cpus);
    // set_mempolicy(MPOL_BIND, nodemask): memory from the GPU's node only. Called through
    // syscall(2) so that no libnuma is needed.
    constexpr int kMpolBind = 2;
    unsigned long mask[16] = {};
    if (b.node >= static_cast<int>(sizeof(mask) * 8))
        return {Errc::kInvalidInput, fmt::format("NUMA node {} is out of range", b.node)};
    mask[b.node / 64] |= 1UL << (b.node % 64);
    if (::syscall(SYS_set_mempolicy, kMpolBind, mask, sizeof(mask) * 8) != 0)
        return errno_status(errno, "bind memory to NUMA node", std::to_string(b.node));
    return ok_status();
}

}  // namespace trainrig::launch

// GPU inventory rules: how many GPUs the driver answers for, whether they are alike, whether the
// driver keeps them initialised, and which CPUs each is close to. article §2.3, §4.1, §5.1.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/gpus.h"
#include "doctor/kmsg_events.h"
#include "doctor/nvml_gpus.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

// GPUs on the bus, or GPUs expected, with no driver answering: that is the finding, not a skip.
std::optional<std::string> count_skip(const Snapshot& s, const RuleOptions& o) {
    if (driver_unreachable(s) && (!no_gpu_reason(s) || (o.expect_gpus && *o.expect_gpus > 0)))
        return std::nullopt;
    return nvml_skip_reason(s);
}

// The PCI functions the kernel log says fell off the bus (Xid 79, or the driver's plain line),
// as "0000:41:00": a lost GPU whose bus id NVML cannot read any more is one of these.
std::set<std::string> fallen_off_bus(const Snapshot& s) {
    std::set<std::string> out;
    if (!s.kernel_log.is_known()) return out;
    auto slot = [](std::string a) {
        std::transform(a.begin(), a.end(), a.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return a.substr(0, a.find('.'));  // "0000:41:00.0" -> "0000:41:00"; no dot: as it is
    };
    for (const auto& r : s.kernel_log.value().records) {
        if (auto x = parse_xid(r.message); x && x->code == 79) out.insert(slot(x->gpu));
        if (auto a = parse_fallen_off_bus(r.message)) out.insert(slot(*a));
    }
    return out;
}

void check_count(const Snapshot& s, const RuleOptions& o, Finding& f) {
    if (auto why = driver_unreachable(s)) {
        const size_t on_bus = s.pci_devices.is_known() ? select_gpus(s).gpus.size() : 0;
        f.evidence.push_back("NVML: " + *why);
        f.raise(FindingStatus::kFail,
                on_bus > 0 ? fmt::format("{} NVIDIA GPU(s) on the PCI bus, but no driver answers "
                                         "for them: {}",
                                         on_bus, *why)
                           : fmt::format("{} GPU(s) expected (--expect-gpus), but no driver "
                                         "answers: {}",
                                         *o.expect_gpus, *why));
        f.remedy =
            "Load the driver (`modprobe nvidia`; `nvidia-smi` must list every GPU) and read "
            "`dmesg | grep -i -e nvidia -e NVRM` for why it did not load; see driver.nvidia.";
        return;
    }
    const auto* n = need_nvml(s, f);
    if (!n) return;
    std::set<std::string> nvml_bus;
    std::vector<std::string> lost;
    size_t lost_without_bus = 0;
    for (const auto& g : n->gpus) {
        if (g.bus_id.is_known()) nvml_bus.insert(g.bus_id.value());
        if (g.lost) lost.push_back(nvml_gpu_label(g));
        if (g.lost && !g.bus_id.is_known()) ++lost_without_bus;
        if (!g.unreachable.empty()) {
            f.raise(FindingStatus::kError, fmt::format("GPU {}: {}", g.index, g.unreachable));
            f.evidence.push_back(fmt::format("GPU {}: {}", g.index, g.unreachable));
        }
    }
    const size_t count = n->gpus.size();
    f.evidence.push_back(
        fmt::format("NVML ({}{}): {} GPU(s){}", n->library, n->fake ? ", fake" : "", count,
                    nvml_bus.empty() ? "" : ": " + join({nvml_bus.begin(), nvml_bus.end()}, ", ")));
    f.data = {{"nvml", count}, {"lost", lost.size()}};
    if (!lost.empty()) {
        f.raise(status_of(policy::kGpuLost),
                fmt::format("{} lost: the driver answers GPU_IS_LOST", join(lost, ", ")));
        f.remedy =
            "A lost GPU has fallen off the bus (see kmsg.xid for Xid 79): drain the node, power "
            "cycle it (a reset is rarely enough), reseat the GPU and its power cables, and RMA it "
            "if it happens again.";
    }
    if (s.pci_devices.is_known()) {
        const auto on_bus = select_gpus(s).gpus;
        f.data["pci"] = on_bus.size();
        // A lost GPU's bus id cannot be read: it is among the GPUs NVML does not list. The kernel
        // log names which (the GPU that fell off the bus); the others the driver never took.
        const std::set<std::string> fell = fallen_off_bus(s);
        std::vector<std::string> missing, fell_off, never_taken;
        for (const auto* d : on_bus) {
            if (nvml_bus.count(d->address)) continue;
            missing.push_back(gpu_label(*d));
            std::string slot = d->address.substr(0, d->address.rfind('.'));
            std::transform(slot.begin(), slot.end(), slot.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            (fell.count(slot) ? fell_off : never_taken).push_back(gpu_label(*d));
        }
        f.evidence.push_back(fmt::format("PCI bus: {} NVIDIA GPU(s)", on_bus.size()));
        if (!missing.empty())
            f.evidence.push_back("on the PCI bus, not listed by NVML: " + join(missing, ", "));
        if (!fell_off.empty())
            f.evidence.push_back("fell off the bus (kernel log): " + join(fell_off, ", "));
        if (missing.size() > lost_without_bus) {
            // The count and the list always agree: when the log names every lost GPU, the rest
            // are listed alone; when it does not, all are listed and the lost ones counted in.
            const bool named = fell_off.size() == lost_without_bus;
            const std::vector<std::string>& listed = named ? never_taken : missing;
            f.raise(
                FindingStatus::kFail,
                named || lost_without_bus == 0
                    ? fmt::format("{} GPU(s) on the PCI bus that the driver does not "
                                  "list{}: {}",
                                  listed.size(), lost_without_bus ? " besides the lost one(s)" : "",
                                  join(listed, ", "))
                    : fmt::format("{} GPU(s) on the PCI bus that the driver does not list, "
                                  "{} of them the lost one(s) (their bus ids are unreadable): "
                                  "{}",
                                  missing.size(), lost_without_bus, join(missing, ", ")));
            if (f.remedy.empty())
                f.remedy =
                    "See pci.gpu-bar and pci.gpu-visible for why the driver could not take these "
                    "GPUs (BAR1 not assigned: enable Above 4G Decoding); `dmesg | grep NVRM` "
                    "names the failure.";
            else
                f.remedy +=
                    " For GPUs the driver never took: see pci.gpu-bar and pci.gpu-visible "
                    "(BAR1 not assigned: enable Above 4G Decoding).";
        } else if (on_bus.size() < count) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("NVML answers for {} GPU(s) but the PCI bus shows {}", count,
                                on_bus.size()));
        }
    }
    if (o.expect_gpus) {
        f.evidence.push_back(fmt::format("--expect-gpus {}", *o.expect_gpus));
        const size_t working = answering_gpus(*n).size();
        if (static_cast<size_t>(*o.expect_gpus) != working)
            f.raise(FindingStatus::kFail,
                    fmt::format("{} working GPU(s), {} expected", working, *o.expect_gpus));
    }
    f.raise(FindingStatus::kPass, fmt::format("{} GPU(s) answer through NVML", count));
}

void check_uniform(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    const auto gpus = answering_gpus(*n);
    if (gpus.size() < 2)
        return f.raise(FindingStatus::kSkip, "fewer than two GPUs answer: nothing to compare");
    GpuFieldReader read(f);
    std::map<std::string, std::vector<int>> kinds;
    for (const auto* g : gpus) {
        const std::string* name = read.get(*g, g->name);
        const uint64_t* mem = read.get(*g, g->memory_total_bytes);
        if (!name || !mem) continue;
        kinds[fmt::format("{}, {}", *name, format_bytes(static_cast<double>(*mem)))].push_back(
            g->index);
    }
    if (f.status == FindingStatus::kError) return;
    if (read.skip_if_none(kinds.size(), "the GPU name and memory")) return;
    for (const auto& [kind, idx] : kinds)
        f.evidence.push_back(fmt::format("GPU {}: {}", fmt::join(idx, ", "), kind));
    if (kinds.size() > 1) {
        f.raise(FindingStatus::kWarn,
                fmt::format("{} different GPU kinds in one machine", kinds.size()));
        f.remedy =
            "Data-parallel training runs at the pace of the slowest, smallest GPU: use one "
            "kind per job (CUDA_VISIBLE_DEVICES) or fit the batch to the smallest memory.";
        return;
    }
    read.note_unsupported();
    f.raise(FindingStatus::kPass,
            fmt::format("all {} GPUs are {}", kinds.begin()->second.size(), kinds.begin()->first));
}

void check_persistence(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    std::vector<std::string> off;
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const bool* on = read.get(*g, g->persistence_mode);
        if (!on) continue;
        ++judged;
        if (!*on) off.push_back(fmt::format("GPU {}", g->index));
    }
    if (read.skip_if_none(judged, "persistence mode")) return;
    read.note_unsupported();
    if (!off.empty()) {
        f.raise(FindingStatus::kWarn, "persistence mode is off on " + join(off, ", "));
        f.remedy =
            "Without it the driver tears GPU state down whenever no process holds the GPU: "
            "every job start pays the initialisation, and settings are lost. Run the daemon: "
            "`systemctl enable --now nvidia-persistenced` (or `nvidia-smi -pm 1` until reboot).";
        return;
    }
    f.raise(FindingStatus::kPass, fmt::format("persistence mode on for {} GPU(s)", judged));
}

void check_cpu_affinity(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto* n = need_nvml(s, f);
    if (!n) return;
    GpuFieldReader read(f);
    std::string all_cpus;
    size_t nodes = 0;
    if (s.topology.is_known()) {
        std::vector<int> cpus;
        for (const auto& node : s.topology.value().numa_nodes)
            if (auto list = parse_cpulist(node.cpulist))
                cpus.insert(cpus.end(), list->begin(), list->end());
        std::sort(cpus.begin(), cpus.end());
        all_cpus = format_cpulist(cpus);
        nodes = s.topology.value().numa_nodes.size();
    }
    size_t judged = 0;
    for (const auto* g : answering_gpus(*n)) {
        const std::string* cpus = read.get(*g, g->cpu_affinity);
        if (!cpus) continue;
        ++judged;
        const PciDevice* d = g->bus_id.is_known() ? find_pci_device(s, g->bus_id.value()) : nullptr;
        f.evidence.push_back(fmt::format(
            "GPU {} -> CPUs {} (NUMA node {})", g->index, cpus->empty() ? "none" : *cpus,
            d && d->numa_node.is_known() ? std::to_string(d->numa_node.value()) : "?"));
        if (cpus->empty()) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("NVML gives no CPU affinity for GPU {}", g->index));
            continue;
        }
        if (nodes > 1 && *cpus == all_cpus)
            f.raise(FindingStatus::kWarn,
                    fmt::format("GPU {} is close to every CPU of this {}-node machine: the "
                                "firmware does not tell which node it hangs off",
                                g->index, nodes));
        if (d && d->local_cpulist.is_known() && !d->local_cpulist.value().empty()) {
            auto a = parse_cpulist(d->local_cpulist.value());
            auto b = parse_cpulist(*cpus);
            if (a && b && *a != *b)
                f.raise(FindingStatus::kWarn,
                        fmt::format("GPU {}: NVML says CPUs {}, the kernel says {}", g->index,
                                    *cpus, d->local_cpulist.value()));
        }
    }
    if (read.skip_if_none(judged, "CPU affinity")) return;
    read.note_unsupported();
    if (f.status == FindingStatus::kWarn)
        f.remedy =
            "Bind each rank by hand after checking `nvidia-smi topo -m` / `trainrig topo`, and "
            "fix the firmware's ACPI NUMA tables (SRAT/_PXM) so the kernel knows.";
    f.raise(FindingStatus::kPass, fmt::format("{} GPU(s) have a NUMA-local CPU set", judged));
}

}  // namespace

std::vector<Rule> gpu_inventory_rules() {
    return {
        {"gpu.count",
         "GPUs the driver answers for, against the PCI bus and --expect-gpus",
         {"training-machine article §5.1 (GPU fallen off the bus)"},
         count_skip,
         check_count},
        {"gpu.uniform",
         "All GPUs of one model and memory size",
         {"training-machine article §2.1"},
         nvml_rule_skip,
         check_uniform},
        {"gpu.persistence",
         "Persistence mode keeps the driver initialised",
         {"NVIDIA Driver Persistence documentation (nvidia-persistenced)"},
         nvml_rule_skip,
         check_persistence},
        {"gpu.cpu-affinity",
         "Each GPU's NUMA-local CPUs, as the driver reports them",
         {"training-machine article §2.3, §5.1 (curves out of step: NUMA binding lost)"},
         nvml_rule_skip,
         check_cpu_affinity},
    };
}

}  // namespace trainrig

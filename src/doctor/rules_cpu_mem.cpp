// CPU and memory rules: frequency governor, ECC memory (EDAC), /dev/shm size.
// article §2.3 (ECC off: silent corruption after 72 h), §4.3; NCCL troubleshooting (shm).
#include <fmt/format.h>

#include "core/quantity.h"
#include "core/text.h"
#include "doctor/rule.h"
#include "policy/host_limits.h"

namespace trainrig {

namespace {

constexpr uint64_t kMinShm = 1ull << 30;  // NCCL's docs suggest --shm-size=1g for containers

void check_governor(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& g = s.cpu_governors;
    if (!need(g, f)) return;
    const auto& want = policy::kCpuGovernor;
    int total = 0, perf = 0;
    std::vector<std::string> parts;
    for (const auto& [name, n] : g.value()) {
        total += n;
        if (name == want.value) perf += n;
        parts.push_back(fmt::format("{} x{}", name, n));
    }
    f.evidence.push_back("/sys/devices/system/cpu/cpufreq/policy*/scaling_governor: " +
                         join(parts, ", "));
    if (perf == total)
        return f.raise(FindingStatus::kPass,
                       fmt::format("all {} CPU policies use {}", total, want.value));
    f.raise(FindingStatus::kWarn, fmt::format("{} of {} CPU frequency policies are not '{}' ({})",
                                              total - perf, total, want.value, join(parts, ", ")));
    f.remedy = fmt::format(
        "`trainrig tune apply --only cpu` (sets {} on every policy now), or cpupower "
        "frequency-set -g {} (package linux-cpupower); persist it with a systemd unit or TuneD's "
        "throughput-performance profile",
        want.value, want.value);
}

void check_ecc(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& e = s.memory.edac;
    if (!need(e, f)) return;
    const char* remedy =
        "Check in the firmware that ECC is enabled, and load the EDAC driver for this platform "
        "(amd64_edac, skx_edac or i10nm_edac); `edac-util -s` then reports the controllers.";
    if (e.is_absent() || e.value().empty()) {
        if (s.host.hypervisor.is_known() && s.host.hypervisor.value()) {
            f.evidence.push_back(
                "/proc/cpuinfo: the hypervisor flag; /sys/devices/system/edac/mc: " +
                std::string(e.is_absent() ? "absent" : "no mc* entries"));
            return f.raise(FindingStatus::kSkip,
                           "a virtual machine: the host's memory controllers, and their ECC, are "
                           "not visible from the guest (the provider's documentation says whether "
                           "its memory has ECC)");
        }
        f.raise(FindingStatus::kWarn,
                e.is_absent() ? "no EDAC interface: cannot confirm that memory has ECC"
                              : "no EDAC memory controller registered: memory may have no ECC");
        f.evidence.push_back("/sys/devices/system/edac/mc: " +
                             std::string(e.is_absent() ? "absent" : "no mc* entries"));
        f.remedy = remedy;
        return;
    }
    uint64_t ce = 0, ue = 0;
    for (const auto& mc : e.value()) {
        need(mc.ce_count, f);
        need(mc.ue_count, f);
        uint64_t c = mc.ce_count.is_known() ? mc.ce_count.value() : 0;
        uint64_t u = mc.ue_count.is_known() ? mc.ue_count.value() : 0;
        ce += c;
        ue += u;
        f.evidence.push_back(fmt::format("{} ({}): {} corrected, {} uncorrected", mc.name,
                                         mc.mc_name.is_known() ? mc.mc_name.value() : "?", c, u));
    }
    if (ue > 0) {
        f.raise(FindingStatus::kFail, fmt::format("{} uncorrected memory errors since boot", ue));
        f.remedy = "Find the DIMM with `edac-util -v` or the BMC's event log and replace it.";
    } else if (ce > 0) {
        f.raise(FindingStatus::kWarn, fmt::format("{} corrected memory errors since boot", ce));
        f.remedy =
            "Corrected errors that keep growing predict a failing DIMM: find it with "
            "`edac-util -v` and plan its replacement.";
    }
    f.raise(FindingStatus::kPass,
            fmt::format("ECC reported by {} memory controllers, no errors", e.value().size()));
}

void check_shm(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& shm = s.memory.shm;
    if (!need(shm, f)) return;
    if (shm.is_absent()) {
        f.raise(FindingStatus::kFail,
                "/dev/shm is not mounted: NCCL's shared-memory transport and DataLoader workers "
                "need it");
        f.remedy =
            "mount -t tmpfs -o size=50% tmpfs /dev/shm (containers: --ipc=host or --shm-size)";
        return;
    }
    const auto& m = shm.value();
    f.evidence.push_back(fmt::format("/proc/self/mountinfo: /dev/shm {} ({})",
                                     format_bytes(static_cast<double>(m.size_bytes)),
                                     m.size_origin));
    if (m.size_bytes < kMinShm) {
        f.raise(FindingStatus::kWarn,
                fmt::format("/dev/shm is {}: NCCL and DataLoader workers fail with bus errors or "
                            "\"unhandled system error\" when it fills",
                            format_bytes(static_cast<double>(m.size_bytes))));
        f.remedy =
            "Containers: run with --ipc=host or --shm-size=16g (Kubernetes: an emptyDir with "
            "medium: Memory at /dev/shm); hosts: mount -o remount,size=50% /dev/shm";
        return;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("/dev/shm is {}", format_bytes(static_cast<double>(m.size_bytes))));
}

}  // namespace

std::vector<Rule> cpu_memory_rules() {
    return {
        {policy::kCpuGovernor.rule,
         "CPU frequency governor is performance",
         {policy::kCpuGovernor.source, "Documentation/admin-guide/pm/cpufreq.rst"},
         [](const Snapshot& s, const RuleOptions&) -> std::optional<std::string> {
             if (s.cpu_governors.is_absent())
                 return "no cpufreq interface (virtual machine or firmware-managed frequency)";
             // tune leaves the governor out too: nothing to judge or set.
             if (s.cpu_governors.is_known() && s.cpu_governors.value().empty())
                 return "no cpufreq policies (a VM or a driver without cpufreq)";
             return std::nullopt;
         },
         check_governor},
        {"mem.ecc",
         "memory has ECC and no uncorrected errors",
         {"training-machine article §2.3 (ECC off: silent corruption)",
          "Documentation/admin-guide/ras.rst"},
         nullptr,
         check_ecc},
        {"mem.shm",
         "/dev/shm large enough for NCCL and data loaders",
         {"NCCL troubleshooting: Docker shared memory", "tmpfs(5)"},
         nullptr,
         check_shm},
    };
}

}  // namespace trainrig

// The cpu profile (frequency governor, a live setting) and the numa profile (each GPU's node
// and CPUs, which `trainrig launch` binds ranks to).
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"
#include "launch/binding.h"
#include "tune/profile.h"

namespace trainrig::tune {

Status add_cpu_profile(const Snapshot& s, const LiveState& live, const TuneRequest& r, Profile& p) {
    if (!r.wants("cpu")) return ok_status();
    if (!s.cpu_governors.is_known()) {
        p.notes.push_back("cpu governor: the cpufreq policies could not be read; left out");
        return ok_status();
    }
    if (s.cpu_governors.value().empty()) {
        p.notes.push_back(
            "cpu governor: no cpufreq policies (a VM or a driver without "
            "cpufreq); left out");
        return ok_status();
    }
    const auto& governor_policy = policy::kCpuGovernor;
    std::string want = governor_policy.value;
    std::string source =
        fmt::format("{}; doctor rule {}", governor_policy.source, governor_policy.rule);
    bool overridden = false;
    if (auto it = r.overrides.find("cpu"); it != r.overrides.end()) {
        for (const auto& [key, value] : it->second) {
            if (key != "governor")
                return {Errc::kInvalidInput,
                        fmt::format("{}: [cpu] \"{}\" is not one tune manages (governor)",
                                    r.overrides_file, key)};
            // Written into every policy's scaling_governor: one it does not offer is refused
            // by the kernel, so it is refused here first.
            const auto& offered = live.governors.empty() ? kernel_governors() : live.governors;
            if (!offered.count(value))
                return {Errc::kInvalidInput,
                        fmt::format("{}: [cpu] governor = \"{}\" is not one this machine "
                                    "offers ({}); the kernel would refuse it",
                                    r.overrides_file, value,
                                    join({offered.begin(), offered.end()}, ", "))};
            want = value;
            source = r.overrides_file;
            overridden = true;
        }
    }
    std::vector<std::string> parts;
    for (const auto& [governor, cpus] : s.cpu_governors.value())
        parts.push_back(s.cpu_governors.value().size() == 1
                            ? governor
                            : fmt::format("{} on {} policies", governor, cpus));
    p.settings.push_back({"cpu", "scaling_governor", want, join(parts, ", "),
                          "other governors lower the clock between kernel launches and data "
                          "loading bursts; the input pipeline and NCCL proxy threads run on it",
                          source, overridden, governor_policy.rule});
    return ok_status();
}

Status add_numa_profile(const Snapshot& s, const TuneRequest& r, Profile& p) {
    if (!r.wants("numa")) return ok_status();
    if (auto it = r.overrides.find("numa"); it != r.overrides.end() && !it->second.empty())
        return {Errc::kInvalidInput,
                fmt::format("{}: [numa] has nothing to override; the binding follows the "
                            "topology (use `trainrig launch --numa none` to turn it off)",
                            r.overrides_file)};
    if (!s.topology.is_known()) {
        p.notes.push_back("numa: the topology could not be read; left out");
        return ok_status();
    }
    if (!is_multi_node(s.topology.value())) {
        p.notes.push_back("numa: one NUMA node; binding gains nothing; left out");
        return ok_status();
    }
    // The binding `trainrig launch` makes, GPU by GPU (launch/binding.h).
    for (const auto& g : launch::gpu_places(s)) {
        if (g.node < 0) {
            p.notes.push_back(fmt::format(
                "numa GPU {}: the firmware reports no NUMA node; not bound", g.address));
            continue;
        }
        p.settings.push_back({"numa", "GPU " + g.address,
                              fmt::format("node {}, CPUs {}", g.node, g.cpus), std::nullopt,
                              "ranks bound to their GPU's node read input and stage pinned "
                              "buffers in local memory (article §2.3)",
                              "hwloc topology; numactl(8) --cpunodebind/--membind"});
    }
    return ok_status();
}

}  // namespace trainrig::tune

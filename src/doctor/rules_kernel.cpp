// Kernel setting rules: swappiness, automatic NUMA balancing, transparent huge pages and open
// file limits. article §3.3, §5.1; TuneD throughput-performance.
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"
#include "policy/host_limits.h"

namespace trainrig {

namespace {

using policy::kFileMax;
using policy::kNofile;
using policy::kNumaBalancing;
using policy::kSwappiness;

void check_swappiness(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& v = s.kernel.swappiness;
    if (!need(v, f)) return;
    if (v.is_absent())
        return f.raise(FindingStatus::kSkip, "/proc/sys/vm/swappiness does not exist");
    f.evidence.push_back(fmt::format("/proc/sys/vm/swappiness = {}", v.value()));
    if (!kSwappiness.passes(v.value())) {
        f.raise(FindingStatus::kWarn,
                fmt::format("vm.swappiness is {} (above {}): the kernel swaps out the trainer's "
                            "host memory under page-cache pressure",
                            v.value(), kSwappiness.bound));
        f.remedy = policy::sysctl_remedy(kSwappiness);
        return;
    }
    f.raise(FindingStatus::kPass, fmt::format("vm.swappiness is {}", v.value()));
}

void check_numa_balancing(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& v = s.kernel.numa_balancing;
    if (!need(v, f)) return;
    if (v.is_absent())
        return f.raise(FindingStatus::kSkip, "this kernel has no automatic NUMA balancing");
    f.evidence.push_back(fmt::format("/proc/sys/kernel/numa_balancing = {}", v.value()));
    if (kNumaBalancing.passes(v.value()))
        return f.raise(FindingStatus::kPass, "automatic NUMA balancing is off");
    if (!s.topology.is_known()) {
        if (need(s.topology, f))
            f.raise(FindingStatus::kError,
                    "automatic NUMA balancing is on and the NUMA topology is unknown");
        return;
    }
    if (!is_multi_node(s.topology.value()))
        return f.raise(FindingStatus::kPass,
                       "automatic NUMA balancing is on, but there is one NUMA node");
    f.raise(FindingStatus::kWarn,
            "automatic NUMA balancing is on: it unmaps pages to sample accesses and migrates "
            "them, which fights explicit numactl binding and adds latency spikes");
    f.remedy = policy::sysctl_remedy(kNumaBalancing) +
               "; `trainrig launch` binds each rank to its GPU's node instead";
}

void check_thp(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& en = s.kernel.thp_enabled;
    const auto& df = s.kernel.thp_defrag;
    if (!need(en, f) || !need(df, f)) return;
    if (en.is_absent())
        return f.raise(FindingStatus::kSkip, "kernel built without transparent huge pages");
    f.evidence.push_back("/sys/kernel/mm/transparent_hugepage/enabled = " + en.value());
    if (df.is_known())
        f.evidence.push_back("/sys/kernel/mm/transparent_hugepage/defrag = " + df.value());
    if (en.value() != "never" && df.is_known() && df.value() == "always") {
        f.raise(FindingStatus::kWarn,
                "THP defrag is 'always': allocations stall in direct reclaim and compaction "
                "(data-loader and pinned-memory stalls)");
        f.remedy =
            "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag; persist it with the "
            "systemd-tmpfiles line 'w /sys/kernel/mm/transparent_hugepage/defrag - - - - "
            "madvise' in " +
            std::string(policy::kThpFile);
        return;
    }
    f.raise(FindingStatus::kPass,
            fmt::format("THP enabled={}, defrag={}", en.value(), df.is_known() ? df.value() : "?"));
}

std::string limit_text(uint64_t v) {
    return v == Rlimit::kUnlimited ? "unlimited" : std::to_string(v);
}

void check_nofile(const Snapshot& s, const RuleOptions&, Finding& f) {
    if (!need(s.nofile, f) || !need(s.kernel.file_max, f)) return;
    if (s.nofile.is_known()) {
        const auto& l = s.nofile.value();
        f.evidence.push_back(fmt::format("/proc/self/limits: Max open files soft {} hard {}",
                                         limit_text(l.soft), limit_text(l.hard)));
        if (l.soft < kNofile.min_soft) {
            f.raise(
                FindingStatus::kWarn,
                fmt::format("open-file limit is {} (soft): data-loader workers and NCCL run out "
                            "of descriptors (\"Too many open files\")",
                            limit_text(l.soft)));
            const std::string persist = fmt::format(
                "`trainrig tune apply --only limits` (it writes '* soft nofile {0}' and "
                "'* hard nofile {0}' to {1}; LimitNOFILE={0} for systemd services and "
                "containers), then log in again",
                kNofile.target, policy::kLimitsFile);
            f.remedy =
                l.hard >= kNofile.min_soft
                    ? fmt::format("raise it in the launch shell (`ulimit -n {}`) now; {}",
                                  limit_text(std::min<uint64_t>(l.hard, kNofile.target)), persist)
                    : "the hard limit is as low: " + persist;
        }
    } else {
        f.evidence.push_back("/proc/self/limits: absent");
    }
    if (s.kernel.file_max.is_known()) {
        const auto fm = s.kernel.file_max.value();
        f.evidence.push_back(fmt::format("/proc/sys/fs/file-max = {}", fm));
        if (!kFileMax.passes(fm)) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("fs.file-max is {} (below {})", fm, kFileMax.bound));
            if (f.remedy.empty()) f.remedy = policy::sysctl_remedy(kFileMax);
        }
    }
    if (s.nofile.is_known())
        f.raise(FindingStatus::kPass,
                fmt::format("open-file limit {} (hard {})", limit_text(s.nofile.value().soft),
                            limit_text(s.nofile.value().hard)));
    else if (s.kernel.file_max.is_known())
        // The per-process limit is what jobs run out of first; without it the rule has not
        // judged what it is for (a low fs.file-max has warned above).
        f.raise(FindingStatus::kSkip,
                fmt::format("no process limits to read (/proc/self/limits absent), so the "
                            "open-file limit is not judged; fs.file-max is {}",
                            s.kernel.file_max.value()));
    else
        f.raise(FindingStatus::kSkip, "neither /proc/self/limits nor fs.file-max exists");
}

}  // namespace

std::vector<Rule> kernel_rules() {
    return {
        {kSwappiness.rule,
         fmt::format("vm.swappiness at most {}", kSwappiness.bound),
         {"training-machine article §3.3, §5.1 (random OOM, memory jumping)", kSwappiness.source},
         nullptr,
         check_swappiness},
        {kNumaBalancing.rule,
         "automatic NUMA balancing off on multi-node machines",
         {kNumaBalancing.source},
         nullptr,
         check_numa_balancing},
        {"kernel.thp",
         "transparent huge pages without synchronous defrag",
         {"Documentation/admin-guide/mm/transhuge.rst"},
         nullptr,
         check_thp},
        {kNofile.rule,
         "open-file limits large enough for loaders and NCCL",
         {kFileMax.source, kNofile.source},
         nullptr,
         check_nofile},
    };
}

}  // namespace trainrig

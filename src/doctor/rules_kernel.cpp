// Kernel setting rules: swappiness, automatic NUMA balancing, transparent huge pages and open
// file limits. article §3.3, §5.1; TuneD throughput-performance.
#include <fmt/format.h>

#include "core/text.h"
#include "doctor/rule.h"

namespace trainrig {

namespace {

constexpr int64_t kMaxSwappiness = 10;    // TuneD throughput-performance uses 10
constexpr uint64_t kMinNofile = 65536;    // data loaders, NCCL sockets, shards
constexpr int64_t kMinFileMax = 1000000;  // the article's fs.file-max

void check_swappiness(const Snapshot& s, const RuleOptions&, Finding& f) {
    const auto& v = s.kernel.swappiness;
    if (!need(v, f)) return;
    if (v.is_absent())
        return f.raise(FindingStatus::kSkip, "/proc/sys/vm/swappiness does not exist");
    f.evidence.push_back(fmt::format("/proc/sys/vm/swappiness = {}", v.value()));
    if (v.value() > kMaxSwappiness) {
        f.raise(FindingStatus::kWarn,
                fmt::format("vm.swappiness is {} (above {}): the kernel swaps out the trainer's "
                            "host memory under page-cache pressure",
                            v.value(), kMaxSwappiness));
        f.remedy =
            "echo 'vm.swappiness = 1' > /etc/sysctl.d/60-trainrig-swappiness.conf && "
            "sysctl --system";
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
    if (v.value() == 0) return f.raise(FindingStatus::kPass, "automatic NUMA balancing is off");
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
    f.remedy =
        "echo 'kernel.numa_balancing = 0' > /etc/sysctl.d/60-trainrig-numa.conf && "
        "sysctl --system; bind each rank with numactl instead";
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
            "madvise' in /etc/tmpfiles.d/trainrig-thp.conf";
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
        if (l.soft < kMinNofile) {
            f.raise(
                FindingStatus::kWarn,
                fmt::format("open-file limit is {} (soft): data-loader workers and NCCL run out "
                            "of descriptors (\"Too many open files\")",
                            limit_text(l.soft)));
            f.remedy =
                l.hard > l.soft
                    ? fmt::format(
                          "raise it in the launch shell (`ulimit -n {}`, up to the hard "
                          "limit) and persist '* soft nofile 1048576' in "
                          "/etc/security/limits.d/90-trainrig.conf (LimitNOFILE= for "
                          "systemd services)",
                          l.hard >= 1048576 ? "1048576" : limit_text(l.hard))
                    : "the hard limit is as low: as root, set '* soft nofile 1048576' and "
                      "'* hard nofile 1048576' in /etc/security/limits.d/90-trainrig.conf (or "
                      "LimitNOFILE=1048576 for systemd services and containers), then log in again";
        }
    } else {
        f.evidence.push_back("/proc/self/limits: absent");
    }
    if (s.kernel.file_max.is_known()) {
        const auto fm = s.kernel.file_max.value();
        f.evidence.push_back(fmt::format("/proc/sys/fs/file-max = {}", fm));
        if (fm < kMinFileMax) {
            f.raise(FindingStatus::kWarn,
                    fmt::format("fs.file-max is {} (below {})", fm, kMinFileMax));
            if (f.remedy.empty())
                f.remedy =
                    "echo 'fs.file-max = 1048576' > /etc/sysctl.d/60-trainrig-files.conf && "
                    "sysctl --system";
        }
    }
    if (s.nofile.is_known())
        f.raise(FindingStatus::kPass,
                fmt::format("open-file limit {} (hard {})", limit_text(s.nofile.value().soft),
                            limit_text(s.nofile.value().hard)));
    else if (s.kernel.file_max.is_known())
        f.raise(FindingStatus::kPass, fmt::format("fs.file-max is {}; no process limits to read",
                                                  s.kernel.file_max.value()));
    else
        f.raise(FindingStatus::kSkip, "neither /proc/self/limits nor fs.file-max exists");
}

}  // namespace

std::vector<Rule> kernel_rules() {
    return {
        {"kernel.swappiness",
         "vm.swappiness at most 10",
         {"training-machine article §3.3, §5.1 (random OOM, memory jumping)",
          "TuneD throughput-performance (swappiness 10)"},
         nullptr,
         check_swappiness},
        {"kernel.numa-balancing",
         "automatic NUMA balancing off on multi-node machines",
         {"Documentation/admin-guide/sysctl/kernel.rst (numa_balancing)"},
         nullptr,
         check_numa_balancing},
        {"kernel.thp",
         "transparent huge pages without synchronous defrag",
         {"Documentation/admin-guide/mm/transhuge.rst"},
         nullptr,
         check_thp},
        {"kernel.nofile",
         "open-file limits large enough for loaders and NCCL",
         {"training-machine article §3.3 (fs.file-max)", "getrlimit(2) RLIMIT_NOFILE"},
         nullptr,
         check_nofile},
    };
}

}  // namespace trainrig
